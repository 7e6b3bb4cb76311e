// `doctor` on native runtimes whose own settings let commands run without a human: the real
// doctor CLI, real provider config files in the CODEX_HOME / HOME / CLAUDE_CONFIG_DIR the provider
// env file gives the Bridge's children. A WARN names the runtime and the setting, never the file's
// path, the home's user name or any value from the files.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { cleanup, makeDeployment, runDoctor, type Deployment } from "./helpers.ts";

const USER = "zqbob";
let d: Deployment;
let home: string;
let codexHome: string;
let claudeDir: string;

const q = (s: string) => JSON.stringify(s);

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

beforeAll(() => {
  d = makeDeployment({ workdirToml: { repo: `read_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["codex", "claude", "qoder"]\n` } });
  home = path.join(d.root, "users", USER);
  codexHome = path.join(d.root, "codex-home-of-" + USER);
  claudeDir = path.join(home, ".claude-cfg");
  fs.mkdirSync(home, { recursive: true });
  const bin = path.join(d.root, "bin");
  fs.mkdirSync(bin);
  const tools: Record<string, string> = {};
  for (const name of ["codex", "claude", "qodercli"]) {
    tools[name] = path.join(bin, name);
    fs.writeFileSync(tools[name]!, `#!/bin/sh\necho "${name} 1.0.0"\n`, { mode: 0o755 });
  }
  const envFile = path.join(d.root, "provider.env");
  fs.writeFileSync(envFile, `HOME=${home}\nCODEX_HOME=${codexHome}\nCLAUDE_CONFIG_DIR=${claudeDir}\nOPENAI_API_KEY=sk-doctor-never-prints-this-0000\n`, { mode: 0o600 });
  const agent =
    `provider_env_file = ${q(envFile)}\n` +
    `[agent.codex]\nenabled = true\nbin = ${q(tools.codex!)}\nuse_proxy = false\n` +
    `[agent.claude]\nenabled = true\nbin = ${q(tools.claude!)}\n` +
    `[agent.qoder]\nenabled = true\nbin = ${q(tools.qodercli!)}\n`;
  fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace("enable_fake_runtime = true\n", `enable_fake_runtime = true\n${agent}`));
});
afterAll(() => cleanup(d.root));

function clean(line: string): void {
  for (const s of [d.root, home, codexHome, claudeDir, USER, "sk-doctor", "npm test", "hunter"]) expect(line).not.toContain(s);
}

async function approvals(runtime: string): Promise<string> {
  const r = await runDoctor(d);
  const line = r.line(`runtime ${runtime} approvals`);
  clean(line);
  return line;
}

describe("codex", () => {
  test("danger-full-access with an approval policy that never asks: WARN naming runtime and setting", async () => {
    write(path.join(codexHome, "config.toml"), 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\nmodel = "gpt-5"\n');
    expect(await approvals("codex")).toBe(
      'runtime codex approvals: WARN -- codex will run commands without putting them to a human: sandbox_mode = "danger-full-access" (commands run unsandboxed and Codex does not ask); ' +
        'note: set sandbox_mode = "workspace-write" (or "read-only") in $CODEX_HOME/config.toml for the Bridge user and remove decision = "allow" rules from $CODEX_HOME/rules, or accept that those commands run without a human',
    );
    const json = JSON.parse((await runDoctor(d, ["--json"])).stdout) as { checks: Array<{ id: string; status: string }> };
    expect(json.checks.find((c) => c.id === "runtime.codex.approvals")?.status).toBe("WARN");
  }, 30_000);

  test("a sandboxed config: no WARN, and the overridden approval policy is said to be overridden", async () => {
    write(path.join(codexHome, "config.toml"), 'approval_policy = "never"\nsandbox_mode = "workspace-write"\n');
    expect(await approvals("codex")).toBe(
      "runtime codex approvals: OK -- no setting lets commands skip the human; Codex asks only where its sandbox or exec policy requires; approval_policy is overridden by serverfs (on-request)",
    );
  }, 30_000);

  test("the selected profile decides: a safe profile over a dangerous top level is OK, a dangerous profile WARNs", async () => {
    write(path.join(codexHome, "config.toml"), 'sandbox_mode = "danger-full-access"\nprofile = "careful"\n[profiles.careful]\nsandbox_mode = "read-only"\n');
    expect(await approvals("codex")).toStartWith("runtime codex approvals: OK -- ");
    write(path.join(codexHome, "config.toml"), 'profile = "yolo"\n[profiles.yolo]\ndefault_permissions = ":danger-full-access"\n');
    expect(await approvals("codex")).toStartWith(
      'runtime codex approvals: WARN -- codex will run commands without putting them to a human: the active profile\'s default_permissions = ":danger-full-access"',
    );
  }, 30_000);

  test("exec-policy allow rules WARN; an unparsable config WARNs without quoting it; no config is OK", async () => {
    write(path.join(codexHome, "config.toml"), 'sandbox_mode = "workspace-write"\n');
    write(path.join(codexHome, "rules", "default.rules"), 'prefix_rule(pattern = ["npm", "test"], decision = "allow")\nprefix_rule(pattern = ["rm"], decision = "prompt")\n');
    expect(await approvals("codex")).toStartWith(
      'runtime codex approvals: WARN -- codex will run commands without putting them to a human: 1 exec-policy rule(s) in $CODEX_HOME/rules with decision = "allow" (matching commands run without asking)',
    );
    fs.rmSync(path.join(codexHome, "rules"), { recursive: true });
    write(path.join(codexHome, "config.toml"), 'api_key = "hunter2-secret\nsandbox_mode = \n');
    expect(await approvals("codex")).toStartWith("runtime codex approvals: WARN -- $CODEX_HOME/config.toml is not valid TOML, so whether commands reach a human is unknown");
    fs.rmSync(path.join(codexHome, "config.toml"));
    expect(await approvals("codex")).toStartWith("runtime codex approvals: OK -- no $CODEX_HOME/config.toml (Codex defaults)");
  }, 30_000);
});

describe("claude and qoder", () => {
  test("allow rules, sandbox auto-allow and PreToolUse hooks WARN with tool names only; a bypass default mode or a sandbox without auto-allow is OK", async () => {
    write(
      path.join(claudeDir, "settings.json"),
      JSON.stringify({ permissions: { defaultMode: "bypassPermissions", allow: ["Bash(npm test:*)", "Bash(git commit:*)", "Write", "Read(**)"] }, sandbox: { enabled: true, autoAllowBashIfSandboxed: true }, hooks: { PreToolUse: [{ matcher: "Bash", hooks: [] }] } }),
    );
    write(path.join(home, ".qoder", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash"] } }));
    const r = await runDoctor(d);
    const claude = r.line("runtime claude approvals");
    clean(claude);
    expect(claude).toBe(
      "runtime claude approvals: WARN -- claude will run some tool calls without putting them to a human: user settings permissions.allow lets Bash ×2, Write ×1 run without asking; " +
        "user settings sandbox.autoAllowBashIfSandboxed (sandboxed Bash commands run without asking); user settings hooks.PreToolUse can allow tool calls without asking; " +
        "note: remove those entries from the Bridge user's Claude settings, or accept that those tool calls run without a human",
    );
    const qoder = r.line("runtime qoder approvals");
    clean(qoder);
    expect(qoder).toStartWith("runtime qoder approvals: WARN -- qoder will run some tool calls without putting them to a human: ~/.qoder/settings.json permissions.allow lets Bash ×1 run without asking");

    write(path.join(claudeDir, "settings.json"), JSON.stringify({ permissions: { defaultMode: "bypassPermissions", allow: ["Read"] }, sandbox: { enabled: true } }));
    fs.rmSync(path.join(home, ".qoder"), { recursive: true });
    const safe = await runDoctor(d);
    expect(safe.line("runtime claude approvals")).toBe(
      "runtime claude approvals: OK -- permission mode pinned to default; no allow rules, sandbox auto-allow or PreToolUse hooks found; permissions.defaultMode in user settings is overridden by serverfs (default)",
    );
    expect(safe.line("runtime qoder approvals")).toStartWith("runtime qoder approvals: OK -- ");
  }, 30_000);
});
