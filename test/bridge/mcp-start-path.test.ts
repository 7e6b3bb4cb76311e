// submit_agent_task's `path` through a real `serverfs serve` process: a hidden, denied or reserved
// start directory is refused by serve before any RPC. To tell serve's refusal from the Bridge's,
// the Bridge here runs without serve's deny glob: a DENIED_PATH for `secret` can only come from
// serve. No task row, no provider process, no lease; the next legitimate submit succeeds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { connectServe } from "../support/mcp.ts";
import { closeHarness, startHarness, taskRows, turnCount, type Harness } from "./helpers.ts";

let h: Harness;
let client: Client;
let repo: string;

beforeAll(async () => {
  h = await startHarness({ aliases: ["repo"] });
  repo = h.workdirs.repo!;
  for (const d of [".git", ".env/x", "secret", ".serverfs-tmp-x", "src"]) fs.mkdirSync(path.join(repo, d), { recursive: true });
  const config = path.join(h.root, "serverfs.toml");
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${h.stateDir}"\n` +
      `[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` +
      `extra_deny_globs = ["secret"]\n` +
      `[agent]\nenabled = true\nenable_fake_runtime = true\n`,
  );
  ({ client } = await connectServe({ args: ["--config", config], clientName: "start-path-test" }));
});
afterAll(async () => {
  await client.close();
  await closeHarness(h);
});


async function submit(p: string, prompt = "complete:x"): Promise<CallToolResult> {
  return (await client.callTool({ name: "submit_agent_task", arguments: { runtime: "fake", workdir: "repo", path: p, prompt } })) as CallToolResult;
}

describe("submit_agent_task start directory", () => {
  test("refused by serve with the file tools' codes; nothing is created, started or leased", async () => {
    const turnsBefore = turnCount(h.turnLog);
    const rowsBefore = taskRows(h);
    const cases: Array<[string, string]> = [
      [".git", "HIDDEN_PATH_NOT_ALLOWED"],
      [".env/x", "HIDDEN_PATH_NOT_ALLOWED"],
      ["./src/../.git", "HIDDEN_PATH_NOT_ALLOWED"],
      ["secret", "DENIED_PATH"],
      ["src/../secret", "DENIED_PATH"],
      [".serverfs-tmp-x", "RESERVED_PATH"],
    ];
    for (const [p, code] of cases) {
      const r = await submit(p);
      const sc = r.structuredContent as { code: string; message: string };
      expect([p, r.isError, sc.code]).toEqual([p, true, code]);
      expect(sc.message).not.toContain(h.root);
    }
    expect(taskRows(h)).toBe(rowsBefore);
    expect(turnCount(h.turnLog)).toBe(turnsBefore);
    expect(fs.existsSync(leaseFiles(h.registry, "repo").guardFile)).toBe(false);

    const ok = await submit("src", "complete:after");
    expect(ok.isError).toBeFalsy();
    const id = (ok.structuredContent as { task_id: string }).task_id;
    const t = await h.waitTerminal(id);
    expect([t.status, t.final_response]).toEqual(["succeeded", "after"]);
    expect(taskRows(h)).toBe(rowsBefore + 1);
  });
});
