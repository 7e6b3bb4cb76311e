// A task's starting directory obeys the workdir's file path policy, enforced by the Bridge itself:
// task.submit sent straight to the socket (as any same-uid peer can) with a hidden, denied or
// reserved directory is refused with that code, creates no task row, starts no provider and takes
// no lease, so a legitimate submit on the same workdir right after succeeds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { ServerfsError } from "../../src/errors.ts";
import { cleanup, closeHarness, startHarness, taskRows, turnCount, type Harness } from "./helpers.ts";

let h: Harness;
let repo: string;

beforeAll(async () => {
  h = await startHarness({ aliases: ["repo"], workdir: { extra_deny_globs: ["secret", "gen/**"] } });
  repo = h.workdirs.repo!;
  for (const d of [".git", ".env/x", "secret", "src/secret/deep", "gen/out", ".serverfs-tmp-x", ".serverfs-disabled", "src/ok"]) {
    fs.mkdirSync(path.join(repo, d), { recursive: true });
  }
  // A harmless-looking name that resolves into a hidden directory.
  fs.symlinkSync(".git", path.join(repo, "innocent"));
  fs.symlinkSync("secret", path.join(repo, "also-innocent"));
});
afterAll(() => closeHarness(h));


async function refusal(params: Record<string, unknown>, method = "task.submit"): Promise<ServerfsError> {
  try {
    await h.client.call(method, params);
  } catch (err) {
    if (err instanceof ServerfsError) return err;
    throw err;
  }
  throw new Error(`${method} unexpectedly succeeded`);
}

const CASES: Array<[string, string]> = [
  [".git", "HIDDEN_PATH_NOT_ALLOWED"],
  [".env/x", "HIDDEN_PATH_NOT_ALLOWED"],
  ["src/.git", "HIDDEN_PATH_NOT_ALLOWED"],
  [".does-not-exist", "HIDDEN_PATH_NOT_ALLOWED"],
  ["secret", "DENIED_PATH"],
  ["src/secret/deep", "DENIED_PATH"],
  ["gen/out", "DENIED_PATH"],
  [".serverfs-tmp-x", "RESERVED_PATH"],
  [".serverfs-disabled", "RESERVED_PATH"],
  ["src/.serverfs-tmp-x/y", "RESERVED_PATH"],
  ["innocent", "HIDDEN_PATH_NOT_ALLOWED"],
  ["also-innocent", "DENIED_PATH"],
];

describe("task.submit start directory through the Bridge RPC", () => {
  test("hidden, denied, reserved and symlinked-into-policy directories are refused with the exact code", async () => {
    const turnsBefore = turnCount(h.turnLog);
    const rowsBefore = taskRows(h);
    const seen: Array<[string, string]> = [];
    for (const [rel, code] of CASES) {
      for (const profile of ["workspace-write", "review"]) {
        const err = await refusal({ runtime: "fake", workdir: "repo", path: rel, profile, prompt: "complete:x" });
        seen.push([rel, err.code]);
        expect(err.code).toBe(code as ServerfsError["code"]);
        expect(err.message).not.toContain(h.root);
        expect(err.message).not.toContain("\n");
        expect(err.message.startsWith(`repo:${rel} — `)).toBe(true);
      }
    }
    expect(seen.length).toBe(CASES.length * 2);
    expect(taskRows(h)).toBe(rowsBefore);
    expect(turnCount(h.turnLog)).toBe(turnsBefore);
    expect(fs.existsSync(leaseFiles(h.registry, "repo").guardFile)).toBe(false);

    // No lease was taken: a legitimate workspace-write submit on the same workdir runs at once.
    const ok = await h.submit("complete:fine", { path: "src/ok" });
    const t = await h.waitTerminal(ok);
    expect([t.status, t.final_response]).toEqual(["succeeded", "fine"]);
    expect(taskRows(h)).toBe(rowsBefore + 1);
  });

  test("an idempotency key on a refused submit is not consumed", async () => {
    const key = "start-path-key";
    const err = await refusal({ runtime: "fake", workdir: "repo", path: ".git", profile: "workspace-write", prompt: "complete:a", idempotency_key: key });
    expect(err.code).toBe("HIDDEN_PATH_NOT_ALLOWED");
    const id = await h.submit("complete:a", { idempotency_key: key });
    expect((await h.waitTerminal(id)).status).toBe("succeeded");
  });

  test("runtime.models advice mode applies the same policy to its path", async () => {
    const err = await refusal({ runtime: "fake", workdir: "repo", task_prompt: "x", path: "secret" }, "runtime.models");
    expect(err.code).toBe("DENIED_PATH");
    const ok = await h.call("runtime.models", { runtime: "fake", workdir: "repo", task_prompt: "x", path: "src/ok" });
    expect(ok.runtime).toBe("fake");
  });
});

describe("the policy is the workdir's own", () => {
  test("with allow_hidden, .git is a valid start directory while .env/x is still DENIED_PATH", async () => {
    const open = await startHarness({ aliases: ["open"], workdir: { allow_hidden: true } });
    try {
      const root = open.workdirs.open!;
      fs.mkdirSync(path.join(root, ".git"));
      fs.mkdirSync(path.join(root, ".env/x"), { recursive: true });
      fs.mkdirSync(path.join(root, ".serverfs-tmp-x"));
      expect(await open.fail("task.submit", { runtime: "fake", workdir: "open", path: ".env/x", profile: "workspace-write", prompt: "complete:x" })).toBe(
        "DENIED_PATH",
      );
      expect(await open.fail("task.submit", { runtime: "fake", workdir: "open", path: ".serverfs-tmp-x", profile: "workspace-write", prompt: "complete:x" })).toBe(
        "RESERVED_PATH",
      );
      const id = await open.submit("complete:in-git", { path: ".git" });
      expect((await open.waitTerminal(id)).status).toBe("succeeded");
    } finally {
      await open.stop();
      cleanup(open.root);
    }
  });
});
