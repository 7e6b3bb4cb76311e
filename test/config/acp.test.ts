// ACP profiles and workdir agent policy (docs/acp-profiles.md, docs/configuration.md), in both
// source formats.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { canonicalJson } from "../../src/common/canonical-json.ts";
import { acpFingerprint } from "../../src/config/fingerprint.ts";
import { cleanupTempDirs, env, executable, expectProblem, load, tempDir, toml, wd } from "./helpers.ts";

afterAll(cleanupTempDirs);

const AGENT = executable();

function profile(fields: Record<string, unknown>): string {
  const lines = Object.entries(fields).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
  return `[[agent.acp_profiles]]\n${lines.join("\n")}\n`;
}

/** A TOML deployment: agent enabled, one rw workspace-write workdir allowlisting `runtimes`. */
function deployment(profiles: string, runtimes: string[] = [], workdirExtra = "", agentExtra = ""): string {
  const mode = runtimes.length > 0 ? `agent_mode = "workspace-write"\nagent_runtimes = ${JSON.stringify(runtimes)}\n` : "";
  return `${wd("proj", "/srv/proj", `read_only = false\n${mode}${workdirExtra}`)}[agent]\nenabled = true\n${agentExtra}${profiles}`;
}

describe("ACP profiles: valid", () => {
  test("a profile yields runtime acp-<id>, defaults and a sha256 fingerprint", async () => {
    const { registry } = await load(toml(deployment(profile({ id: "opencode", command: AGENT, args: ["acp"] }), ["acp-opencode"])));
    const [p] = registry.agent.acp_profiles;
    expect(p).toMatchObject({ id: "opencode", runtime: "acp-opencode", command: AGENT, args: ["acp"], use_proxy: false, probe_timeout_seconds: 30, shutdown_timeout_seconds: 5 });
    expect(p!.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(registry.workdirs[0]!.agent_runtimes).toEqual(["acp-opencode"]);
  });

  test("no profile: no ACP runtime and nothing else changes", async () => {
    const { registry } = await load(toml(deployment("")));
    expect(registry.agent.acp_profiles).toEqual([]);
  });

  test("shell metacharacters in args are kept verbatim as argv text", async () => {
    const args = ["$(rm -rf /)", "`id`", "a;b|c&&d", "'quoted' \"double\"", "*", "~/x", "${HOME}", "> /etc/passwd"];
    const { registry } = await load(toml(deployment(profile({ id: "x", command: AGENT, args }))));
    expect(registry.agent.acp_profiles[0]!.args).toEqual(args);
  });

  test("the fingerprint follows launch fields, not timeouts", async () => {
    const fp = async (fields: Record<string, unknown>) =>
      (await load(toml(deployment(profile({ id: "x", command: AGENT, ...fields }))))).registry.agent.acp_profiles[0]!.fingerprint;
    const base = await fp({ args: ["a"] });
    expect(await fp({ args: ["a"] })).toBe(base);
    expect(await fp({ args: ["a"], probe_timeout_seconds: 99, shutdown_timeout_seconds: 9 })).toBe(base);
    expect(await fp({ args: ["b"] })).not.toBe(base);
    expect(await fp({ args: ["a"], use_proxy: true })).not.toBe(base);
    expect(await fp({ args: ["a", ""] })).not.toBe(base);
  });

  test("the fingerprint is the SHA-256 of the launch fields' canonical JSON, so snapshots stored by earlier builds keep their keys", () => {
    const fields = { id: "x", command: "/usr/bin/agent", args: ["acp", "ü"], use_proxy: false };
    const expected = createHash("sha256").update(canonicalJson(fields), "utf8").digest("hex");
    expect(acpFingerprint(fields)).toBe(`sha256:${expected}`);
    expect(acpFingerprint({ ...fields, tmpdir_env: ["T"] })).toBe(`sha256:${createHash("sha256").update(canonicalJson({ ...fields, tmpdir_env: ["T"] }), "utf8").digest("hex")}`);
  });

  test("tmpdir_env is kept and is a launch field; without it the fingerprint is unchanged", async () => {
    const { registry } = await load(toml(deployment(profile({ id: "x", command: AGENT, tmpdir_env: ["CLAUDE_CODE_TMPDIR"] }))));
    expect(registry.agent.acp_profiles[0]!.tmpdir_env).toEqual(["CLAUDE_CODE_TMPDIR"]);
    const without = (await load(toml(deployment(profile({ id: "x", command: AGENT }))))).registry.agent.acp_profiles[0]!;
    expect(without.tmpdir_env).toBeUndefined();
    expect(registry.agent.acp_profiles[0]!.fingerprint).not.toBe(without.fingerprint);
    expect((await load(toml(deployment(profile({ id: "x", command: AGENT, tmpdir_env: [] }))))).registry.agent.acp_profiles[0]!.fingerprint).toBe(without.fingerprint);
  });

  test("a 28-character id (32-character runtime id), 16 profiles and 32 args are accepted", async () => {
    const id = `a${"b".repeat(27)}`;
    const many = Array.from({ length: 16 }, (_, i) => profile({ id: i === 0 ? id : `p${i}`, command: AGENT, args: Array.from({ length: 32 }, (_, j) => `arg${j}`) })).join("");
    const { registry } = await load(toml(deployment(many, [`acp-${id}`])));
    expect(registry.agent.acp_profiles).toHaveLength(16);
    expect(registry.agent.acp_profiles[0]!.runtime).toHaveLength(32);
  });

  test("a symlink to an executable is accepted as the command", async () => {
    const link = path.join(tempDir(), "link");
    fs.symlinkSync(AGENT, link);
    const { registry } = await load(toml(deployment(profile({ id: "x", command: link }))));
    expect(registry.agent.acp_profiles[0]!.command).toBe(link);
  });
});

describe("ACP profiles: refused", () => {
  const dir = tempDir();
  const notExec = path.join(dir, "plain");
  fs.writeFileSync(notExec, "#!/bin/sh\n", { mode: 0o644 });
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

  const cases: Array<[string, string, string, string]> = [
    ["duplicate id", profile({ id: "x", command: AGENT }) + profile({ id: "x", command: AGENT }), "agent.acp_profiles[1].id", "duplicate profile id"],
    ["reserved name codex", profile({ id: "codex", command: AGENT }), "agent.acp_profiles[0].id", "reserved runtime name"],
    ["reserved name fake", profile({ id: "fake", command: AGENT }), "agent.acp_profiles[0].id", "reserved runtime name"],
    ["uppercase id", profile({ id: "Grok", command: AGENT }), "agent.acp_profiles[0].id", "expected a profile id"],
    ["digit-first id", profile({ id: "1x", command: AGENT }), "agent.acp_profiles[0].id", "expected a profile id"],
    ["id with space", profile({ id: "a b", command: AGENT }), "agent.acp_profiles[0].id", "expected a profile id"],
    ["29-char id (33-char runtime id)", profile({ id: `a${"b".repeat(28)}`, command: AGENT }), "agent.acp_profiles[0].id", "expected a profile id"],
    ["17 profiles", Array.from({ length: 17 }, (_, i) => profile({ id: `p${i}`, command: AGENT })).join(""), "agent.acp_profiles", "at most 16"],
    ["33 args", profile({ id: "x", command: AGENT, args: Array.from({ length: 33 }, () => "a") }), "agent.acp_profiles[0].args", "at most 32"],
    ["relative command", profile({ id: "x", command: "bin/agent" }), "agent.acp_profiles[0].command", "absolute"],
    ["bare command name", profile({ id: "x", command: "opencode" }), "agent.acp_profiles[0].command", "absolute"],
    ["missing command", profile({ id: "x", command: path.join(dir, "nope") }), "agent.acp_profiles[0].command", "no file exists"],
    ["directory command", profile({ id: "x", command: dir }), "agent.acp_profiles[0].command", "is a directory"],
    ["command with ..", profile({ id: "x", command: `${dir}/../x` }), "agent.acp_profiles[0].command", "'..'"],
    ["unknown key env", `${profile({ id: "x", command: AGENT })}[agent.acp_profiles.env]\nFOO = "1"\n`, "agent.acp_profiles[0].env", "unknown key"],
    ["unknown key cwd", profile({ id: "x", command: AGENT, cwd: "/tmp" }), "agent.acp_profiles[0].cwd", "unknown key"],
    ["unknown key shell", profile({ id: "x", command: AGENT, shell: true }), "agent.acp_profiles[0].shell", "unknown key"],
    ["unknown key runtime", profile({ id: "x", command: AGENT, runtime: "acp-y" }), "agent.acp_profiles[0].runtime", "unknown key"],
    ["missing command key", profile({ id: "x" }), "agent.acp_profiles[0].command", "missing"],
    ["NUL in an argument", profile({ id: "x", command: AGENT, args: ["a\u0000b"] }), "agent.acp_profiles[0].args[0]", "NUL"],
    ["oversized argument", profile({ id: "x", command: AGENT, args: ["a".repeat(4097)] }), "agent.acp_profiles[0].args[0]", "at most 4096 bytes"],
    ["oversized profile", profile({ id: "x", command: AGENT, args: Array.from({ length: 32 }, () => "a".repeat(1100)) }), "agent.acp_profiles[0]", "larger than 32768 bytes"],
    ["non-array args", profile({ id: "x", command: AGENT, args: "acp" }), "agent.acp_profiles[0].args", "expected a list"],
    ["string use_proxy", profile({ id: "x", command: AGENT, use_proxy: "false" }), "agent.acp_profiles[0].use_proxy", "expected a boolean"],
    ["zero probe timeout", profile({ id: "x", command: AGENT, probe_timeout_seconds: 0 }), "agent.acp_profiles[0].probe_timeout_seconds", "1 to 600"],
    ["huge shutdown timeout", profile({ id: "x", command: AGENT, shutdown_timeout_seconds: 121 }), "agent.acp_profiles[0].shutdown_timeout_seconds", "1 to 120"],
    ["tmpdir_env redirecting the loader", profile({ id: "x", command: AGENT, tmpdir_env: ["LD_PRELOAD"] }), "agent.acp_profiles[0].tmpdir_env[0]", "must not be redirected"],
    ["tmpdir_env redirecting serverfs", profile({ id: "x", command: AGENT, tmpdir_env: ["CLAUDE_CODE_TMPDIR", "SERVERFS_RUN_ID"] }), "agent.acp_profiles[0].tmpdir_env[1]", "must not be redirected"],
    ["tmpdir_env with a bad name", profile({ id: "x", command: AGENT, tmpdir_env: ["A=B"] }), "agent.acp_profiles[0].tmpdir_env[0]", "a variable name"],
    ["tmpdir_env with nine names", profile({ id: "x", command: AGENT, tmpdir_env: Array.from({ length: 9 }, (_, i) => `T${i}`) }), "agent.acp_profiles[0].tmpdir_env", "at most 8"],
  ];
  if (!isRoot) cases.push(["non-executable command", profile({ id: "x", command: notExec }), "agent.acp_profiles[0].command", "not executable"]);
  for (const [name, text, key, reason] of cases) {
    test(`${name} → ${key}`, async () => {
      await expectProblem(toml(deployment(text)), key, reason);
    });
  }

  test("a non-executable command is refused (skipped only as root, where X_OK is granted by any x bit)", async () => {
    if (isRoot) {
      // root: a file with no x bit at all is still refused.
      fs.chmodSync(notExec, 0o600);
    }
    await expectProblem(toml(deployment(profile({ id: "x", command: notExec }))), "agent.acp_profiles[0].command", "not executable");
  });
});

describe("workdir agent policy", () => {
  const P = profile({ id: "x", command: AGENT });
  const cases: Array<[string, string, string, string]> = [
    ["review + acp runtime", deployment(P, [], 'agent_mode = "review"\nagent_runtimes = ["acp-x"]\n'), "workdirs[0].agent_runtimes[0]", "requires agent_mode 'workspace-write'"],
    ["review + native runtime", deployment("", [], 'agent_mode = "review"\nagent_runtimes = ["codex"]\n', "[agent.codex]\nenabled = true\n"), "workdirs[0].agent_runtimes[0]", "requires agent_mode 'workspace-write'"],
    ["read-only + workspace-write", `${wd("p", "/p", 'agent_mode = "workspace-write"\nagent_runtimes = ["acp-x"]\n')}[agent]\nenabled = true\n${P}`, "workdirs[0].read_only", "needs workdirs[0].read_only = false"],
    ["allowlisted but unconfigured acp runtime", deployment(P, ["acp-nope"]), "workdirs[0].agent_runtimes[0]", "no ACP profile 'nope'"],
    ["allowlisted but disabled native runtime", deployment("", ["claude"]), "workdirs[0].agent_runtimes[0]", "agent.claude.enabled = true"],
    ["fake without enable_fake_runtime", deployment("", ["fake"]), "workdirs[0].agent_runtimes[0]", "agent.enable_fake_runtime = true"],
    ["unknown runtime name", deployment("", ["gemini"]), "workdirs[0].agent_runtimes[0]", "expected a runtime name"],
    ["duplicate runtime", deployment(P, ["acp-x", "acp-x"]), "workdirs[0].agent_runtimes[1]", "duplicate runtime"],
    ["mode without runtimes", deployment("", [], 'agent_mode = "workspace-write"\n'), "workdirs[0].agent_runtimes", "needs at least one runtime"],
    ["runtimes while disabled", deployment(P, [], 'agent_runtimes = ["acp-x"]\n'), "workdirs[0].agent_runtimes", "must be empty while workdirs[0].agent_mode is disabled"],
    ["agent policy with [agent] absent", wd("p", "/p", 'read_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n'), "workdirs[0].agent_mode", "agent.enabled = true"],
    ["agent policy with agent disabled", `${wd("p", "/p", 'read_only = false\nagent_mode = "review"\nagent_runtimes = ["fake"]\n')}[agent]\nenabled = false\nenable_fake_runtime = true\n`, "workdirs[0].agent_mode", "agent.enabled = true"],
    ["spool threshold above 8 MiB", deployment("", [], "", "result_spool_threshold_bytes = 8388609\n"), "agent.result_spool_threshold_bytes", "at most 8388608"],
    ["relative provider env file", deployment("", [], "", 'provider_env_file = "provider.env"\n'), "agent.provider_env_file", "absolute"],
    ["native bin with a slash but relative", deployment("", [], "", '[agent.codex]\nbin = "bin/codex"\n'), "agent.codex.bin", "absolute path or a bare command name"],
  ];
  for (const [name, text, key, reason] of cases) {
    test(`${name} → ${key}`, async () => {
      await expectProblem(toml(text), key, reason);
    });
  }

  test("fake with review is accepted when the fake runtime is enabled", async () => {
    const { registry } = await load(toml(deployment("", [], 'agent_mode = "review"\nagent_runtimes = ["fake"]\n', "enable_fake_runtime = true\n")));
    expect(registry.workdirs[0]).toMatchObject({ agent_mode: "review", agent_runtimes: ["fake"] });
  });

  test("native and ACP runtimes together on a workspace-write workdir", async () => {
    const { registry } = await load(toml(deployment(P, ["codex", "acp-x"], "", "[agent.codex]\nenabled = true\nbin = \"/opt/codex/bin/codex\"\n")));
    expect(registry.workdirs[0]!.agent_runtimes).toEqual(["codex", "acp-x"]);
    expect(registry.agent.codex).toEqual({ enabled: true, bin: "/opt/codex/bin/codex", use_proxy: true });
  });
});

describe("ACP profiles and agent policy in .env", () => {
  const base = `WORKDIR_01_ALIAS=proj\nWORKDIR_01_PATH=/srv/proj\nWORKDIR_01_READ_ONLY=false\nSERVERFS_AGENT_BRIDGE_ENABLED=true\n`;
  const json = (v: unknown) => `SERVERFS_ACP_PROFILES_JSON='${JSON.stringify(v)}'\n`;

  test("a valid profile", async () => {
    const { registry } = await load(env(`${base}WORKDIR_01_AGENT_MODE=workspace-write\nWORKDIR_01_AGENT_RUNTIMES=acp-x\n${json([{ id: "x", command: AGENT, args: ["a;b", "$(x)"] }])}`));
    expect(registry.agent.acp_profiles[0]).toMatchObject({ runtime: "acp-x", args: ["a;b", "$(x)"] });
  });

  const cases: Array<[string, string, string, string]> = [
    ["malformed JSON", "SERVERFS_ACP_PROFILES_JSON='[{\"id\": \"x\",'\n", "SERVERFS_ACP_PROFILES_JSON", "malformed JSON"],
    ["JSON object, not array", json({ id: "x", command: AGENT }), "SERVERFS_ACP_PROFILES_JSON", "expected a list"],
    ["relative command", json([{ id: "x", command: "agent" }]), "SERVERFS_ACP_PROFILES_JSON[0].command", "absolute"],
    ["unknown key env", json([{ id: "x", command: AGENT, env: { A: "1" } }]), "SERVERFS_ACP_PROFILES_JSON[0].env", "unknown key"],
    ["duplicate id", json([{ id: "x", command: AGENT }, { id: "x", command: AGENT }]), "SERVERFS_ACP_PROFILES_JSON[1].id", "duplicate profile id"],
    ["reserved id", json([{ id: "qoder", command: AGENT }]), "SERVERFS_ACP_PROFILES_JSON[0].id", "reserved runtime name"],
    ["duplicate JSON key", `SERVERFS_ACP_PROFILES_JSON='[{"id":"x","command":"${AGENT}"},{"id":"y","command":"${AGENT}","args":["a"],"command":"/bin/sh"}]'\n`, "SERVERFS_ACP_PROFILES_JSON[1]", "duplicate key 'command'"],
    ["number arg", json([{ id: "x", command: AGENT, args: [1] }]), "SERVERFS_ACP_PROFILES_JSON[0].args[0]", "expected a string"],
    ["review + acp", `WORKDIR_01_AGENT_MODE=review\nWORKDIR_01_AGENT_RUNTIMES=acp-x\n${json([{ id: "x", command: AGENT }])}`, "WORKDIR_01_AGENT_RUNTIMES", "requires agent_mode 'workspace-write'"],
    ["unconfigured acp runtime", "WORKDIR_01_AGENT_MODE=workspace-write\nWORKDIR_01_AGENT_RUNTIMES=acp-y\n", "WORKDIR_01_AGENT_RUNTIMES", "no ACP profile 'y'"],
    ["fake without enable", "WORKDIR_01_AGENT_MODE=workspace-write\nWORKDIR_01_AGENT_RUNTIMES=fake\n", "WORKDIR_01_AGENT_RUNTIMES", "SERVERFS_AGENT_ENABLE_FAKE_RUNTIME = true"],
    ["disabled native", "WORKDIR_01_AGENT_MODE=workspace-write\nWORKDIR_01_AGENT_RUNTIMES=qoder\n", "WORKDIR_01_AGENT_RUNTIMES", "SERVERFS_QODER_ENABLED = true"],
  ];
  for (const [name, text, key, reason] of cases) {
    test(`${name} → ${key}`, async () => {
      await expectProblem(env(base + text), key, reason);
    });
  }

  test("read-only + workspace-write names the READ_ONLY key", async () => {
    const text = `WORKDIR_01_ALIAS=proj\nWORKDIR_01_PATH=/p\nWORKDIR_01_AGENT_MODE=workspace-write\nWORKDIR_01_AGENT_RUNTIMES=fake\nSERVERFS_AGENT_BRIDGE_ENABLED=true\nSERVERFS_AGENT_ENABLE_FAKE_RUNTIME=true\n`;
    await expectProblem(env(text), "WORKDIR_01_READ_ONLY", "needs WORKDIR_01_READ_ONLY = false");
  });

  test("agent policy while the Bridge is disabled names the .env switch", async () => {
    const text = `WORKDIR_01_ALIAS=proj\nWORKDIR_01_PATH=/p\nWORKDIR_01_READ_ONLY=false\nWORKDIR_01_AGENT_MODE=review\nWORKDIR_01_AGENT_RUNTIMES=fake\n`;
    await expectProblem(env(text), "WORKDIR_01_AGENT_MODE", "SERVERFS_AGENT_BRIDGE_ENABLED = true");
  });
});
