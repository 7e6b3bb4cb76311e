import { afterAll, beforeAll, expect, test } from "bun:test";
import { closeHarness, startHarness, turnCount, type Harness } from "./helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => closeHarness(h));

test("complete: task runs a real provider and succeeds inline", async () => {
  const r = await h.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:hello" });
  expect(r.status).toBe("queued");
  const t = await h.waitTerminal(r.task_id as string);
  expect(t.status).toBe("succeeded");
  expect(t.final_response).toBe("hello");
  expect(turnCount(h.turnLog)).toBe(1);
});
