// docs/acp-profiles.md must stay working: its serverfs.toml and .env examples are loaded through
// the real config loader (with the documented host paths swapped for real files on this machine),
// and both must yield the same eight acp-* runtimes with the documented argv; each agent's own
// TOML profile in section 3 loads, and equals its JSON twin.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { loadRegistry } from "../../../src/config/load.ts";
import { tempDir } from "../../support/temp.ts";

const DOC = fs.readFileSync(path.resolve(import.meta.dir, "../../../docs/acp-profiles.md"), "utf8");
let dir: string;
let fakeAgent: string;
let workdir: string;
let envFile: string;

function block(lang: string, index: number): string {
  const blocks = [...DOC.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
  return blocks[index]!;
}

/** Documented absolute paths → real ones here (the loader checks that they exist). */
function localize(text: string): string {
  return text
    .replace(/\/usr\/local\/[A-Za-z0-9_@./-]+/g, fakeAgent)
    .replaceAll("/home/alice/src/app", workdir)
    .replaceAll("/home/alice/.config/serverfs/provider.env", envFile);
}

const EXPECTED: Array<[string, string[]]> = [
  ["acp-opencode", ["acp"]],
  ["acp-claude-acp", []],
  ["acp-claude-code-acp", []],
  ["acp-codex-acp", []],
  ["acp-gemini", ["--acp"]],
  ["acp-qwen", ["--acp", "--auth-type=openai"]],
  ["acp-copilot", ["--acp"]],
  ["acp-auggie", ["--acp", "--permission", "save-file:ask-user", "--permission", "launch-process:ask-user"]],
];

describe("docs/acp-profiles.md examples", () => {
  beforeAll(() => {
    dir = tempDir("serverfs-acp-docs-");
    fakeAgent = path.join(dir, "agent");
    fs.writeFileSync(fakeAgent, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    workdir = path.join(dir, "app");
    fs.mkdirSync(workdir);
    envFile = path.join(dir, "provider.env");
    fs.writeFileSync(envFile, localize(block("sh", 1)), { mode: 0o600 });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("the serverfs.toml example loads with eight ACP profiles allowed on the workdir", async () => {
    const file = path.join(dir, "serverfs.toml");
    fs.writeFileSync(file, localize(block("toml", 0)));
    const { registry } = await loadRegistry({ configFile: file });
    expect(registry.agent.acp_profiles.map((p) => [p.runtime, p.args])).toEqual(EXPECTED);
    expect(registry.workdirs[0]!.agent_runtimes).toEqual(EXPECTED.map((e) => e[0]));
    expect(registry.agent.acp_profiles.find((p) => p.id === "codex-acp")!.shutdown_timeout_seconds).toBe(2);
  });

  test("the .env example loads to the same profiles and fingerprints", async () => {
    const tomlFile = path.join(dir, "serverfs.toml");
    fs.writeFileSync(tomlFile, localize(block("toml", 0)));
    const envConfig = path.join(dir, "serverfs.env");
    fs.writeFileSync(envConfig, localize(block("sh", 0)));
    const fromEnv = (await loadRegistry({ envFile: envConfig })).registry;
    const fromToml = (await loadRegistry({ configFile: tomlFile })).registry;
    expect(fromEnv.agent.acp_profiles).toEqual(fromToml.agent.acp_profiles);
    expect(fromEnv.workdirs[0]!.agent_runtimes).toEqual(EXPECTED.map((e) => e[0]));
  });

  test("each agent's TOML profile loads and equals its JSON twin", async () => {
    const tomls = [...DOC.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1]!).slice(1);
    const jsons = [...DOC.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(tomls.length).toBe(8);
    expect(jsons.length).toBe(tomls.length);
    for (const [i, snippet] of tomls.entries()) {
      const id = /id = "([^"]+)"/.exec(snippet)![1]!;
      const workdirLines = ["[[workdirs]]", 'alias = "app"', `path = "${workdir}"`, "read_only = false", 'agent_mode = "workspace-write"', `agent_runtimes = ["acp-${id}"]`];
      const tomlFile = path.join(dir, `agent-${i}.toml`);
      fs.writeFileSync(tomlFile, ["[agent]", "enabled = true", localize(snippet), ...workdirLines, ""].join("\n"));
      const fromToml = (await loadRegistry({ configFile: tomlFile })).registry.agent.acp_profiles;
      const envConfig = path.join(dir, `agent-${i}.env`);
      const json = localize(jsons[i]!.trim());
      fs.writeFileSync(envConfig, ["SERVERFS_AGENT_BRIDGE_ENABLED=true", `SERVERFS_ACP_PROFILES_JSON='${json}'`, "WORKDIR_01_ALIAS=app", `WORKDIR_01_PATH=${workdir}`, "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_AGENT_MODE=workspace-write", `WORKDIR_01_AGENT_RUNTIMES=acp-${id}`, ""].join("\n"));
      const fromEnv = (await loadRegistry({ envFile: envConfig })).registry.agent.acp_profiles;
      expect(fromToml.map((p) => p.runtime)).toEqual([`acp-${id}`]);
      expect(fromEnv).toEqual(fromToml);
    }
  });
});
