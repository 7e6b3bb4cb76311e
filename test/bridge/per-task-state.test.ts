// What a finished task leaves in the Bridge process: nothing kept per task. A long-running Bridge
// runs thousands of tasks, so per-task entries in its maps, or per-task copies of what is the same
// for every task of a workdir, are memory that only grows. Real daemon, real fake providers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TaskRun } from "../../src/bridge/service/task-run.ts";
import { waitUntil } from "../support/proc.ts";
import { closeHarness, startHarness, type Harness } from "./helpers.ts";

const CAP = 40;
let h: Harness;
const collections: string[] = [];

beforeAll(async () => {
  h = await startHarness({ aliases: ["a", "b"], limits: { max_events_per_task: CAP }, collectHeap: (kind) => collections.push(kind) });
});
afterAll(() => closeHarness(h));

async function complete(workdir: string, i: number): Promise<string> {
  const { task_id } = await h.client.call("task.submit", { runtime: "fake", workdir, path: "", profile: "workspace-write", prompt: `complete:task ${i}` });
  const t = await h.waitTerminal(task_id as string);
  expect(t.status).toBe("succeeded");
  return task_id as string;
}

/** The run of a `wait:` task while it is active (then cancelled and awaited). */
async function liveRun(workdir: string): Promise<TaskRun> {
  const { task_id } = await h.client.call("task.submit", { runtime: "fake", workdir, path: "", profile: "workspace-write", prompt: "wait:" });
  const id = task_id as string;
  await h.waitFor(id, (t) => t.status === "running");
  const run = h.bridge.service["core"].active.get(id) as TaskRun | undefined;
  expect(run).toBeDefined();
  await h.client.call("task.cancel", { task_id: id });
  await h.waitTerminal(id);
  await run!.released;
  return run!;
}

describe("per-task state", () => {
  test("finished tasks leave no cached event counts and no runs; their counts still bound late events", async () => {
    const { service } = h.bridge;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(...(await Promise.all([complete("a", i), complete("b", i)])));
    expect(service.activeCount()).toBe(0);
    expect(service.events.trackedTasks).toBe(0);
    // The count is read back from the task's row: a late event is still bounded by the cap.
    const id = ids[0]!;
    const recorded = service.store.require(id).event_count;
    expect(recorded).toBeGreaterThan(0);
    expect((await h.events(id)).length).toBe(recorded);
    for (let n = recorded; n < CAP; n++) service.events.append(id, "task.note", "{}");
    expect(() => service.events.append(id, "task.note", "{}")).toThrow(expect.objectContaining({ code: "AGENT_EVENT_LIMIT_REACHED" }));
    service.events.flush();
    expect(service.store.require(id).event_count).toBe(CAP);
    service.events.forget(id);
    expect(service.events.trackedTasks).toBe(0);
  });

  test("tasks of one workdir share one redactor; another workdir has its own", async () => {
    const first = await liveRun("a");
    const second = await liveRun("a");
    const other = await liveRun("b");
    expect(second.redactor).toBe(first.redactor);
    expect(other.redactor).not.toBe(first.redactor);
    // Shared, it still redacts its own workdir and only that.
    expect(first.redactor.text(`see ${h.workdirs.a}/src/x.ts`)).toBe("see <workdir>/src/x.ts");
    expect(other.redactor.text(`see ${h.workdirs.a}/src/x.ts`)).not.toContain(h.workdirs.a);
    expect(h.bridge.service.events.trackedTasks).toBe(0);
  });

  test("finished runs lead to a heap collection once the Bridge is idle (the real daemon's wiring)", async () => {
    const before = collections.length;
    for (let i = 0; i < 4; i++) await Promise.all([complete("a", 100 + i), complete("b", 100 + i)]);
    expect(await waitUntil(() => collections.slice(before).includes("idle"), 5000)).toBe(true);
  });
});
