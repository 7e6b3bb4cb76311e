// The real CLI as a subprocess: exit codes, the rendered document, --out atomicity and mode,
// secrets never echoed, TOML/.env byte-identical round trip, and init.
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { loadRegistry } from "../../src/config/load.ts";
import { renderDocument } from "../../src/config/render.ts";
import { cleanupTempDirs, executable, REPO, runCli, tempDir, wd, writeTemp } from "./helpers.ts";

afterAll(cleanupTempDirs);

const posix = process.platform !== "win32";

describe("render-config CLI", () => {
  test("valid config: exit 0, canonical JSON on stdout with document_version and sorted keys", () => {
    const file = writeTemp(wd("docs", "/srv/docs"), "ok.toml");
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const doc = JSON.parse(r.stdout);
    expect(doc.document_version).toBe(1);
    expect(doc.workdirs[0].alias).toBe("docs");
    expect(r.stdout.endsWith("}\n")).toBe(true);
    expect(Object.keys(doc)).toEqual(["agent", "document_version", "limits", "server", "workdirs"]);
    expect(Object.keys(doc.workdirs[0])).toEqual([...Object.keys(doc.workdirs[0])].sort());
  });

  const invalid: Array<[string, string, string]> = [
    ["read_only string", wd("a", "/a", 'read_only = "false"\n'), "workdirs[0].read_only"],
    ["bad alias", wd("1abc"), "workdirs[0].alias"],
    ["relative path", wd("a", "./a"), "workdirs[0].path"],
    ["review + acp", `${wd("a", "/a", 'read_only = false\nagent_mode = "review"\nagent_runtimes = ["acp-x"]\n')}[agent]\nenabled = true\n`, "workdirs[0].agent_runtimes[0]"],
  ];
  for (const [name, text, key] of invalid) {
    test(`invalid (${name}): exit 2, one line naming the file and key, no stack trace`, () => {
      const file = writeTemp(text, "bad.toml");
      const r = runCli(["render-config", "--config", file]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`serverfs: render-config: CONFIGURATION_ERROR: ${file}: ${key}: `);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }

  test("every problem gets its own stderr line", () => {
    const file = writeTemp(`[server]\nlog_level = 5\n${wd("a", "/a", "readonly = true\n")}`, "multi.toml");
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines.length).toBe(2);
    for (const line of lines) expect(line.startsWith(`serverfs: render-config: CONFIGURATION_ERROR: ${file}: `)).toBe(true);
  });

  test("missing file, invalid .env and usage errors exit 2", () => {
    const dir = tempDir();
    expect(runCli(["render-config", "--config", path.join(dir, "missing.toml")]).code).toBe(2);
    const envFile = writeTemp("export WORKDIR_01_ALIAS=a\n", "bad.env");
    const r = runCli(["render-config", "--env-file", envFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${envFile}: line 1: 'export' is not supported`);
    expect(runCli(["render-config"]).code).toBe(2);
    expect(runCli(["render-config", "--config", "a", "--env-file", "b"]).code).toBe(2);
    expect(runCli(["render-config", "--config", "a", "extra"]).code).toBe(2);
  });

  test("the same deployment as TOML and as .env renders byte-identical documents", () => {
    const dir = tempDir();
    const agent = executable(dir, "my agent");
    const tomlText = `[server]
log_level = "warning"
state_dir = "${dir}/state"
[limits]
max_walk_entries = 1000
[defaults]
extra_deny_globs = ["*.bak"]
allow_hidden = true
[[workdirs]]
alias = "docs"
path = "/srv/docs"
description = "Docs"
extra_deny_globs = ["drafts/**", "*.bak"]
binary_transfer_enabled = true
[[workdirs]]
alias = "proj"
path = "/srv/proj"
read_only = false
max_write_bytes = 4096
agent_mode = "workspace-write"
agent_runtimes = ["acp-echo", "fake", "codex"]
[agent]
enabled = true
enable_fake_runtime = true
retention_seconds = 7200
event_idle_timeout_seconds = 600
provider_env_file = "${dir}/provider.env"
[agent.codex]
enabled = true
use_proxy = false
[agent.proxy]
enabled = true
url = "http://Proxy.Example:3128"
no_proxy = ["Internal.Example", "localhost"]
[[agent.acp_profiles]]
id = "echo"
command = "${agent}"
args = ["--acp", "$(x) ; y"]
use_proxy = true
probe_timeout_seconds = 12
`;
    const envText = `SERVERFS_LOG_LEVEL=WARNING
SERVERFS_STATE_DIR=${dir}/state
SERVERFS_MAX_WALK_ENTRIES=1000
SERVERFS_EXTRA_DENY_GLOBS=*.bak
SERVERFS_ALLOW_HIDDEN=true
WORKDIR_02_ALIAS=docs
WORKDIR_02_PATH=/srv/docs
WORKDIR_02_DESCRIPTION=Docs
WORKDIR_02_EXTRA_DENY_GLOBS=drafts/**,*.bak
WORKDIR_02_BINARY_TRANSFER_ENABLED=on
WORKDIR_05_ALIAS=proj
WORKDIR_05_PATH=/srv/proj
WORKDIR_05_READ_ONLY=false
WORKDIR_05_MAX_WRITE_BYTES=4096
WORKDIR_05_AGENT_MODE=workspace-write
WORKDIR_05_AGENT_RUNTIMES=acp-echo,fake,codex
SERVERFS_AGENT_BRIDGE_ENABLED=true
SERVERFS_AGENT_ENABLE_FAKE_RUNTIME=true
SERVERFS_AGENT_TASK_RETENTION_HOURS=2
SERVERFS_AGENT_EVENT_IDLE_TIMEOUT_SECONDS=600
SERVERFS_AGENT_PROVIDER_ENV_FILE=${dir}/provider.env
SERVERFS_CODEX_ENABLED=true
SERVERFS_CODEX_USE_PROXY=false
SERVERFS_AGENT_PROXY_ENABLED=true
SERVERFS_PROXY_HOST=Proxy.Example
SERVERFS_PROXY_PORT=3128
SERVERFS_AGENT_NO_PROXY=Internal.Example,localhost
SERVERFS_ACP_PROFILES_JSON='${JSON.stringify([{ id: "echo", command: agent, args: ["--acp", "$(x) ; y"], use_proxy: true, probe_timeout_seconds: 12 }])}'
`;
    const a = runCli(["render-config", "--config", writeTemp(tomlText, "same.toml")]);
    const b = runCli(["render-config", "--env-file", writeTemp(envText, "same.env")]);
    expect(a.stderr).toBe("");
    expect(b.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    const doc = JSON.parse(a.stdout);
    expect(doc.agent.proxy).toEqual({ enabled: true, url: "http://proxy.example:3128", no_proxy: ["127.0.0.1", "localhost", "::1", "internal.example"] });
    expect(doc.agent.acp_profiles[0].fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(doc.workdirs[0].extra_deny_globs).toEqual(["*.bak", "drafts/**"]);
  });

  test("the shipped examples render byte-identical documents", async () => {
    // The examples name /tmp/serverfs-example/{docs,project} (CI creates them); the loader does
    // not require them to exist, but create them as CI does and remove only what we created.
    const root = "/tmp/serverfs-example";
    const existed = fs.existsSync(root);
    for (const d of ["docs", "project"]) fs.mkdirSync(path.join(root, d), { recursive: true });
    try {
      const a = runCli(["render-config", "--config", "examples/serverfs.toml"]);
      const b = runCli(["render-config", "--env-file", "examples/serverfs.env"]);
      expect([a.code, b.code]).toEqual([0, 0]);
      expect(b.stdout).toBe(a.stdout);
    } finally {
      if (!existed) fs.rmSync(root, { recursive: true, force: true });
    }
    const minimal = await loadRegistry({ configFile: path.join(REPO, "examples/minimal.toml") });
    expect(minimal.registry.workdirs).toHaveLength(1);
  });
});

describe("render-config --out", () => {
  test("writes the document atomically with mode 0600 and leaves no temp file", () => {
    const dir = tempDir();
    const cfg = writeTemp(wd("docs"), "c.toml");
    const out = path.join(dir, "bridge.json");
    fs.writeFileSync(out, "old", { mode: 0o644 });
    const r = runCli(["render-config", "--config", cfg, "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(fs.readdirSync(dir)).toEqual(["bridge.json"]);
    if (posix) expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(out, "utf8")).workdirs[0].alias).toBe("docs");
  });

  test("an invalid config never creates or changes the output file", () => {
    const dir = tempDir();
    const bad = writeTemp(wd("a", "/a", 'read_only = "no"\n'), "bad.toml");
    const out = path.join(dir, "bridge.json");
    expect(runCli(["render-config", "--config", bad, "--out", out]).code).toBe(2);
    expect(fs.readdirSync(dir)).toEqual([]);
    const original = Buffer.from('{"previous":"document"}\n');
    fs.writeFileSync(out, original, { mode: 0o600 });
    const before = fs.statSync(out);
    expect(runCli(["render-config", "--config", bad, "--out", out]).code).toBe(2);
    expect(fs.readFileSync(out).equals(original)).toBe(true);
    expect(fs.statSync(out).mtimeMs).toBe(before.mtimeMs);
    expect(fs.readdirSync(dir)).toEqual(["bridge.json"]);
  });

  test("a symlink at --out is refused and its target is untouched", () => {
    if (!posix) return; // symlink creation needs privileges on Windows
    const dir = tempDir();
    const victim = path.join(dir, "victim");
    fs.writeFileSync(victim, "keep");
    const link = path.join(dir, "out.json");
    fs.symlinkSync(victim, link);
    const r = runCli(["render-config", "--config", writeTemp(wd("a"), "c.toml"), "--out", link]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("IO_ERROR");
    expect(r.stderr).toContain("symbolic link");
    expect(fs.readFileSync(victim, "utf8")).toBe("keep");
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(["out.json", "victim"]);
  });

  test("an --out in a missing directory fails cleanly", () => {
    const out = path.join(tempDir(), "no", "such", "dir.json");
    const r = runCli(["render-config", "--config", writeTemp(wd("a"), "c.toml"), "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("IO_ERROR");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("secrets never appear in errors or output", () => {
  const SECRET = "hunter2-S3cr3t-value";

  test("a proxy password in the TOML URL is refused without echoing it", async () => {
    const file = writeTemp(`${wd("a")}[agent]\nenabled = true\n[agent.proxy]\nenabled = true\nurl = "http://user:${SECRET}@proxy:3128"\n`, "s.toml");
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("agent.proxy.url: must not carry credentials");
    expect(r.stderr + r.stdout).not.toContain(SECRET);
  });

  test("SERVERFS_PROXY_PASSWORD/USERNAME are refused without echoing them", () => {
    const file = writeTemp(`WORKDIR_01_ALIAS=a\nWORKDIR_01_PATH=/a\nSERVERFS_PROXY_HOST=proxy\nSERVERFS_PROXY_PORT=3128\nSERVERFS_PROXY_USERNAME=${SECRET}u\nSERVERFS_PROXY_PASSWORD='${SECRET}'\n`, "s.env");
    const r = runCli(["render-config", "--env-file", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("SERVERFS_PROXY_PASSWORD: proxy credentials are refused");
    expect(r.stderr).toContain("SERVERFS_PROXY_USERNAME: proxy credentials are refused");
    expect(r.stderr + r.stdout).not.toContain(SECRET);
  });

  test("a secret mistyped into any value is not echoed by shape or syntax errors", () => {
    const cases = [
      `${wd("a")}[agent]\nprovider_env_file = "${SECRET}"\n`,
      wd("a", "/a", `read_only = "${SECRET}"\n`),
      wd("a", SECRET),
      `${wd("a")}[agent.proxy]\nurl = "https://${SECRET}.example:1"\n`,
      `${wd("a")}secret = "${SECRET}\n`,
    ];
    for (const text of cases) {
      const r = runCli(["render-config", "--config", writeTemp(text, "s.toml")]);
      expect(r.code).toBe(2);
      expect(r.stderr + r.stdout).not.toContain(SECRET);
    }
    const envCases = [`SERVERFS_LOG_LEVEL=${SECRET}\n`, `WORKDIR_01_READ_ONLY=${SECRET}\n`, `SERVERFS_UNKNOWN=${SECRET}\n`, `SERVERFS_ACP_PROFILES_JSON='[${SECRET}'\n`, `WORKDIR_01_DESCRIPTION="${SECRET}$"\n`];
    for (const text of envCases) {
      const r = runCli(["render-config", "--env-file", writeTemp(`WORKDIR_01_ALIAS=a\nWORKDIR_01_PATH=/a\n${text}`, "s.env")]);
      expect(r.code).toBe(2);
      expect(r.stderr + r.stdout).not.toContain(SECRET);
    }
  });

  test("the provider env file's contents never enter the rendered document", async () => {
    const dir = tempDir();
    const providerEnv = path.join(dir, "provider.env");
    fs.writeFileSync(providerEnv, `OPENAI_API_KEY=${SECRET}\n`, { mode: 0o600 });
    const { registry } = await loadRegistry({ configFile: writeTemp(`${wd("a")}[agent]\nenabled = true\nprovider_env_file = "${providerEnv}"\n`, "p.toml") });
    const doc = renderDocument(registry);
    expect(doc).toContain(providerEnv);
    expect(doc).not.toContain(SECRET);
  });
});

describe("init", () => {
  test("writes a valid commented starter and refuses to overwrite it", async () => {
    const dir = tempDir();
    const out = path.join(dir, "serverfs.toml");
    const r = runCli(["init", "--out", out], dir);
    expect(r.code).toBe(0);
    const text = fs.readFileSync(out, "utf8");
    expect(text).toContain("# ");
    const { registry } = await loadRegistry({ configFile: out });
    expect(registry.workdirs).toEqual([expect.objectContaining({ alias: "project", path: fs.realpathSync(dir), read_only: true })]);
    const again = runCli(["init", "--out", out], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
    expect(fs.readFileSync(out, "utf8")).toBe(text);
  });

  test("defaults to ./serverfs.toml and never follows a dangling symlink", () => {
    const dir = tempDir();
    expect(runCli(["init"], dir).code).toBe(0);
    expect(fs.existsSync(path.join(dir, "serverfs.toml"))).toBe(true);
    if (!posix) return;
    const dir2 = tempDir();
    const target = path.join(dir2, "elsewhere");
    fs.symlinkSync(target, path.join(dir2, "serverfs.toml"));
    const r = runCli(["init"], dir2);
    expect(r.code).toBe(1);
    expect(fs.existsSync(target)).toBe(false);
  });
});
