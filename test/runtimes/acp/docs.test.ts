// docs/acp-profiles.md must stay working: its serverfs.toml and .env examples are loaded through
// the real config loader (with the documented host paths swapped for real files on this machine),
// and both must yield the same six acp-* runtimes with the documented argv.
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
  ["acp-codex-acp", []],
  ["acp-gemini", ["--acp"]],
  ["acp-qwen", ["--acp", "--auth-type=openai"]],
  ["acp-copilot", ["--acp"]],
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

  test("the serverfs.toml example loads with six ACP profiles allowed on the workdir", async () => {
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
});
