// The agent child's environment: the private provider env file (verbatim, private or refused),
// proxy variables only when the profile asks, a per-task TMPDIR under the state dir, and nothing
// that must never reach a provider.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseProviderEnv } from "../../../src/runtimes/acp/provider-env.ts";
import { agentConfig, makeRig, outcome, profileFor, type Rig } from "./harness.ts";

let rig: Rig;
beforeEach(() => {
  rig = makeRig();
});
afterEach(() => rig.cleanup());

function envFile(text: string, mode = 0o600): string {
  const file = path.join(rig.stateDir, `provider-${Math.random().toString(36).slice(2)}.env`);
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
  return file;
}

async function envOf(name: string, agent = agentConfig(), profileArgs: string[] = [], useProxy = false): Promise<string> {
  const task = rig.task(`env ${name}`);
  const result = await rig.adapter(profileFor("scripted-agent.ts", profileArgs, { use_proxy: useProxy }), agent).run(task);
  return result.finalResponse.slice(name.length + 1);
}

describe("child environment", () => {
  test("provider env file values arrive verbatim: '=' in values, spaces, quotes, no expansion", async () => {
    const file = envFile("# a comment\n\nAPI_KEY=abc=def ghi \nQUOTED=\"not unquoted\"\nREF=$HOME\n");
    const agent = agentConfig({ provider_env_file: file });
    expect(await envOf("API_KEY", agent)).toBe("abc=def ghi ");
    expect(await envOf("QUOTED", agent)).toBe('"not unquoted"');
    expect(await envOf("REF", agent)).toBe("$HOME");
  });

  test("a provider env file that is not 0600 is refused before launch, without naming it", async () => {
    const file = envFile("API_KEY=x\n", 0o644);
    const task = rig.task("env API_KEY");
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts"), agentConfig({ provider_env_file: file })).run(task));
    expect(res.code).toBe("AGENT_ACP_LAUNCH_FAILED");
    expect(res.message).toContain("0600");
    expect(res.message).not.toContain(rig.stateDir);
    expect(task.spawns).toEqual([]);
  });

  test("a symlinked provider env file is refused", async () => {
    const real = envFile("API_KEY=x\n");
    const link = path.join(rig.stateDir, "link.env");
    fs.symlinkSync(real, link);
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts"), agentConfig({ provider_env_file: link })).run(rig.task("env API_KEY")));
    expect(res.code).toBe("AGENT_ACP_LAUNCH_FAILED");
  });

  test("the file cannot re-add Bun control variables or forge the run marker", async () => {
    const file = envFile("BUN_OPTIONS=--preload /tmp/evil.js\nSERVERFS_RUN_ID=forged\nBUN_FEATURE_FLAG_X=1\n");
    const agent = agentConfig({ provider_env_file: file });
    expect(await envOf("BUN_OPTIONS", agent)).toBe("<unset>");
    expect(await envOf("BUN_FEATURE_FLAG_X", agent)).toBe("<unset>");
    expect(await envOf("SERVERFS_RUN_ID", agent)).not.toBe("forged");
  });

  test("TMPDIR and CLAUDE_CODE_TMPDIR point at a per-task directory under the state dir, removed afterwards", async () => {
    const tmp = await envOf("TMPDIR");
    expect(tmp.startsWith(rig.tmpRoot + path.sep)).toBe(true);
    expect(await envOf("CLAUDE_CODE_TMPDIR")).toStartWith(rig.tmpRoot + path.sep);
    expect(fs.existsSync(tmp)).toBe(false);
  });

  test("proxy variables only when the profile sets use_proxy and the proxy is enabled", async () => {
    const proxy = { enabled: true, url: "http://127.0.0.1:3128", no_proxy: ["127.0.0.1", "localhost", "::1", "internal.example"] };
    const agent = agentConfig({ proxy });
    expect(await envOf("HTTPS_PROXY", agent, [], true)).toBe("http://127.0.0.1:3128");
    expect(await envOf("NO_PROXY", agent, [], true)).toBe("127.0.0.1,localhost,::1,internal.example");
    expect(await envOf("HTTPS_PROXY", agent, [], false)).toBe(process.env.HTTPS_PROXY ?? "<unset>");
  });

  test("parser: lines without '=' or with a bad name are refused with the line number only", () => {
    expect(() => parseProviderEnv("GOOD=1\nnot a pair\n")).toThrow("line 2");
    expect(() => parseProviderEnv("1BAD=x\n")).toThrow("line 1");
    expect(parseProviderEnv("A=1\r\n  # indented comment\nB=\n")).toEqual({ A: "1", B: "" });
  });
});
