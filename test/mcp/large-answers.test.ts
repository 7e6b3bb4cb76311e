// The large-answer gate: one large answer at a time, the next started only once the previous one
// was written (as the transport reports it by id) or its request was cancelled; without a
// transport that reports, the slot is let go when the tool returns. Order is shown by promise
// settlement, never by time.
import { describe, expect, test } from "bun:test";
import { LargeAnswerGate } from "../../src/mcp/large-answers.ts";

/** Let every pending promise callback run (a macrotask turn). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("LargeAnswerGate", () => {
  test("the second run starts only once the first one's answer is written", async () => {
    const gate = new LargeAnswerGate();
    gate.reportsWrittenAnswers();
    const started: string[] = [];
    const signal = new AbortController().signal;
    const first = gate.run(1, signal, async () => (started.push("first"), "a"));
    const second = gate.run(2, signal, async () => (started.push("second"), "b"));
    expect(await first).toBe("a");
    await settle();
    expect(started).toEqual(["first"]);
    gate.written(2); // another id changes nothing
    await settle();
    expect(started).toEqual(["first"]);
    gate.written(1);
    expect(await second).toBe("b");
    expect(started).toEqual(["first", "second"]);
  });

  test("a cancelled request lets the slot go, and so does a failed one", async () => {
    const gate = new LargeAnswerGate();
    gate.reportsWrittenAnswers();
    const cancel = new AbortController();
    await gate.run("x", cancel.signal, async () => "held");
    let ran = false;
    const next = gate.run("y", new AbortController().signal, async () => {
      ran = true;
      throw new Error("read failed");
    });
    await settle();
    expect(ran).toBe(false);
    cancel.abort();
    await expect(next).rejects.toThrow("read failed");
    // the failure released at once: a third run needs no written answer
    expect(await gate.run("z", new AbortController().signal, async () => "free")).toBe("free");
  });

  test("without a transport that reports written answers, each run lets go when it returns", async () => {
    const gate = new LargeAnswerGate();
    const signal = new AbortController().signal;
    expect(await Promise.all([gate.run(1, signal, async () => 1), gate.run(2, signal, async () => 2)])).toEqual([1, 2]);
  });
});
