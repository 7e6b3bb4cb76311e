// The agent child's environment end to end: the Bridge's provider environment (scrubbed, plus the
// private provider env file, verbatim) reaches the agent; proxy variables only when the profile
// asks; a per-task TMPDIR under the state dir; nothing that must never reach a provider.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { agentConfig, makeRig, profileFor, type Rig } from "./harness.ts";

let rig: Rig;
beforeEach(() => {
  rig = makeRig();
});
afterEach(() => rig.cleanup());

function useEnvFile(text: string): void {
  const file = path.join(rig.stateDir, "provider.env");
  fs.writeFileSync(file, text, { mode: 0o600 });
  rig.providerEnvFile = file;
}

async function envOf(name: string, agent = agentConfig(), useProxy = false, tmpdirEnv?: string[]): Promise<string> {
  const task = rig.task(`env ${name}`);
  const profile = profileFor("scripted-agent.ts", [], { use_proxy: useProxy, ...(tmpdirEnv ? { tmpdir_env: tmpdirEnv } : {}) });
  const result = await rig.adapter(profile, agent).run(task);
  return result.finalResponse.slice(name.length + 1);
}

describe("child environment", () => {
  test("provider env file values arrive verbatim: '=' in values, spaces, quotes, no expansion", async () => {
    useEnvFile("# a comment\n\nAPI_KEY=abc=def ghi \nQUOTED=\"not unquoted\"\nREF=$HOME\n");
    expect(await envOf("API_KEY")).toBe("abc=def ghi ");
    expect(await envOf("QUOTED")).toBe('"not unquoted"');
    expect(await envOf("REF")).toBe("$HOME");
  });

  test("Bun control variables and a forged run marker never reach the agent", async () => {
    useEnvFile("BUN_OPTIONS=--preload /tmp/evil.js\nSERVERFS_RUN_ID=forged\nBUN_FEATURE_FLAG_X=1\n");
    expect(await envOf("BUN_OPTIONS")).toBe("<unset>");
    expect(await envOf("BUN_FEATURE_FLAG_X")).toBe("<unset>");
    expect(await envOf("SERVERFS_RUN_ID")).toStartWith("acp-test-");
  });

  // CLAUDE_CODE_TMPDIR is what a Claude-based agent (claude-agent-acp) reads; its profile names it
  // in tmpdir_env (docs/acp-profiles.md), the generic adapter knows no agent's variables.
  test("TMPDIR and CLAUDE_CODE_TMPDIR point at a per-task directory under the state dir, removed afterwards", async () => {
    const tmp = await envOf("TMPDIR");
    expect(tmp.startsWith(rig.tmpRoot + path.sep)).toBe(true);
    expect(await envOf("CLAUDE_CODE_TMPDIR", agentConfig(), false, ["CLAUDE_CODE_TMPDIR"])).toStartWith(rig.tmpRoot + path.sep);
    expect(fs.existsSync(tmp)).toBe(false);
  });

  test("a profile without tmpdir_env gets no agent-specific temp variable", async () => {
    expect(await envOf("CLAUDE_CODE_TMPDIR")).toBe(process.env.CLAUDE_CODE_TMPDIR ?? "<unset>");
  });

  test("proxy variables only when the profile sets use_proxy and the proxy is enabled", async () => {
    const proxy = { enabled: true, url: "http://127.0.0.1:3128", no_proxy: ["127.0.0.1", "localhost", "::1", "internal.example"] };
    const agent = agentConfig({ proxy });
    expect(await envOf("HTTPS_PROXY", agent, true)).toBe("http://127.0.0.1:3128");
    expect(await envOf("NO_PROXY", agent, true)).toBe("127.0.0.1,localhost,::1,internal.example");
    expect(await envOf("HTTPS_PROXY", agent, false)).toBe(process.env.HTTPS_PROXY ?? "<unset>");
    const disabled = agentConfig({ proxy: { ...proxy, enabled: false } });
    expect(await envOf("HTTPS_PROXY", disabled, true)).toBe(process.env.HTTPS_PROXY ?? "<unset>");
  });
});
