// State privacy and secrets: a world-readable state dir, state file and provider env file are
// FAIL with the chmod to run; a config problem is exit 2 naming the key (the loader's own text);
// and no secret from the provider env file or the proxy settings ever reaches stdout or stderr,
// in text or JSON, whatever the outcome.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { BUN, CLI } from "../support/proc.ts";
import { makeDeployment, runDoctor, startBridge, type Deployment } from "./helpers.ts";
import { cleanupTempDirs } from "../support/temp.ts";

// Every deployment and temp dir is a test/support temp dir: removed here, or at exit at the latest.
afterAll(cleanupTempDirs);

const deployment = makeDeployment;

const SECRETS = ["sk-live-51Hx9SECRETVALUEabc", "hunter2-proxy-pass", "proxyuser-alice", "ghp_TOKENvalue0123456789"];

function expectNoSecret(...texts: string[]): void {
  for (const t of texts) for (const s of SECRETS) expect(t).not.toContain(s);
}

describe("state directory privacy", () => {
  test("world-readable state dir, state file and socket dir each FAIL with the chmod that fixes it", async () => {
    const d = deployment();
    const b = await startBridge(d);
    await b.stop();
    fs.chmodSync(d.stateDir, 0o755);
    fs.chmodSync(path.join(d.stateDir, "bridge.sqlite3"), 0o644);
    fs.chmodSync(path.join(d.stateDir, "locks"), 0o750);
    const r = await runDoctor(d);
    expect(r.code).toBe(1);
    expect(r.line("state directory")).toBe(
      `state directory: FAIL -- ${d.stateDir} has mode 0755 (expected 0700); fix: chmod go-rwx ${d.stateDir}; the Bridge's state must be private to its user`,
    );
    const files = r.line("state files");
    expect(files).toContain(`${path.join(d.stateDir, "bridge.sqlite3")} has mode 0644 (expected 0600)`);
    expect(files).toContain(`${path.join(d.stateDir, "locks")} has mode 0750 (expected 0700)`);
    expect(files).toContain(`fix: chmod go-rwx ${path.join(d.stateDir, "bridge.sqlite3")} ${path.join(d.stateDir, "locks")}`);
    // Doctor only reports: the modes are still wrong afterwards.
    expect(fs.statSync(d.stateDir).mode & 0o777).toBe(0o755);
  }, 30_000);

  test("a state dir owned by another user is FAIL naming the uid (root only: chown needs it)", async () => {
    if (process.getuid!() !== 0) return; // only root can hand a directory to another uid; nothing to measure otherwise
    const d = deployment();
    const b = await startBridge(d);
    await b.stop();
    fs.chownSync(path.join(d.stateDir, "spool"), 65534, 65534);
    const r = await runDoctor(d);
    expect(r.line("state files")).toContain(`${path.join(d.stateDir, "spool")} is owned by uid 65534, not 0`);
    expect(r.line("state files")).toContain("back to the Bridge user (chown)");
  }, 30_000);

  test("a symlink planted in the state dir is FAIL and is not followed", async () => {
    const d = deployment();
    const b = await startBridge(d);
    await b.stop();
    fs.symlinkSync("/etc/passwd", path.join(d.stateDir, "spool", "evil"));
    const r = await runDoctor(d);
    expect(r.line("state files")).toContain(`${path.join(d.stateDir, "spool", "evil")} is a symlink`);
    expect(r.line("state files")).toContain("remove the symlink(s)");
  }, 30_000);
});

describe("provider env file", () => {
  function withEnvFile(mode: number): { d: Deployment; file: string } {
    const root = makeDeployment();
    const file = path.join(root.root, "provider.env");
    fs.writeFileSync(file, `# provider credentials\nOPENAI_API_KEY=${SECRETS[0]}\nGITHUB_TOKEN=${SECRETS[3]}\n`, { mode });
    fs.chmodSync(file, mode);
    fs.appendFileSync(root.config, `provider_env_file = ${JSON.stringify(file)}\n`);
    return { d: root, file };
  }

  test("mode 0644 is FAIL with chmod 600; mode 0600 is OK; its contents are never shown", async () => {
    const { d, file } = withEnvFile(0o644);
    const bad = await runDoctor(d);
    expect(bad.line("provider env file")).toBe(
      `provider env file: FAIL -- ${file} has mode 0644 (expected 0600); fix: chmod 600 ${file}; its values are credentials, and the Bridge refuses to start with it readable by others`,
    );
    fs.chmodSync(file, 0o600);
    const good = await runDoctor(d);
    expect(good.line("provider env file")).toBe(`provider env file: OK -- ${file} (mode 0600, owned by this user; contents not read)`);
    const json = await runDoctor(d, ["--json"]);
    expectNoSecret(bad.stdout, bad.stderr, good.stdout, good.stderr, json.stdout, json.stderr);
    expect(bad.stdout).not.toContain("OPENAI_API_KEY");
  });

  test("missing, or a symlink: FAIL", async () => {
    const { d, file } = withEnvFile(0o600);
    const real = `${file}.real`;
    fs.renameSync(file, real);
    expect((await runDoctor(d)).line("provider env file")).toContain(`FAIL -- ${file} does not exist; fix: create it`);
    fs.symlinkSync(real, file);
    expect((await runDoctor(d)).line("provider env file")).toContain(`FAIL -- ${file} is a symlink`);
  });

  test("--probe-acp hands the env file to the agent as a task would; its values still never reach the report", async () => {
    const { d } = withEnvFile(0o600);
    const fixture = path.resolve(import.meta.dir, "../fixtures/acp/scripted-agent.ts");
    fs.appendFileSync(d.config, `[[agent.acp_profiles]]\nid = "echo"\ncommand = ${JSON.stringify(BUN)}\nargs = [${JSON.stringify(fixture)}]\n`);
    const r = await runDoctor(d, ["--probe-acp"]);
    const j = await runDoctor(d, ["--probe-acp", "--json"]);
    expect(r.line("acp echo session")).toContain("OK -- session/new answered");
    expectNoSecret(r.stdout, r.stderr, j.stdout, j.stderr);
  }, 30_000);
});

describe("proxy", () => {
  test("enabled proxy on a loopback listener is reachable; a closed port is FAIL; credentials are refused by the loader without echoing them", async () => {
    const server = net.createServer((s) => s.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const d = deployment({ agent: `[agent.proxy]\nenabled = true\nurl = "http://127.0.0.1:${port}"\n` });
      const up = await runDoctor(d);
      expect(up.line("agent proxy")).toMatch(new RegExp(`^agent proxy: OK -- 127\\.0\\.0\\.1:${port} reachable in \\d+ ms; auth=none; no enabled runtime routes through it$`));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const down = await runDoctor(d);
      expect(down.line("agent proxy")).toContain(`agent proxy: FAIL -- 127.0.0.1:${port} is not reachable (ECONNREFUSED)`);
      expect(down.line("agent proxy")).toContain("fix: start the proxy or fix agent.proxy.url");
    } finally {
      server.close();
    }

    const creds = deployment({ agent: `[agent.proxy]\nenabled = true\nurl = "http://${SECRETS[2]}:${SECRETS[1]}@127.0.0.1:3128"\n` });
    const t = await runDoctor(creds);
    const j = await runDoctor(creds, ["--json"]);
    expect(t.code).toBe(2);
    expect(j.code).toBe(2);
    expect(t.line("config")).toContain("config: FAIL -- CONFIGURATION_ERROR: ");
    expect(t.line("config")).toContain("agent.proxy.url: must not carry credentials");
    expectNoSecret(t.stdout, t.stderr, j.stdout, j.stderr);
  }, 30_000);

  test(".env deployment: SERVERFS_PROXY_USERNAME/PASSWORD are refused by name, their values never printed", async () => {
    const root = deployment({ agentEnabled: false });
    const envFile = path.join(root.root, "serverfs.env");
    fs.writeFileSync(
      envFile,
      [
        `WORKDIR_01_ALIAS=repo`,
        `WORKDIR_01_PATH=${root.workdirs.repo}`,
        `SERVERFS_AGENT_ENABLED=true`,
        `SERVERFS_PROXY_HOST=127.0.0.1`,
        `SERVERFS_PROXY_PORT=3128`,
        `SERVERFS_PROXY_USERNAME=${SECRETS[2]}`,
        `SERVERFS_PROXY_PASSWORD=${SECRETS[1]}`,
        "",
      ].join("\n"),
    );
    for (const extra of [[], ["--json"]]) {
      const p = Bun.spawn([BUN, CLI, "doctor", "--env-file", envFile, ...extra], { stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(code).toBe(2);
      expect(out).toContain("SERVERFS_PROXY_PASSWORD: proxy credentials are refused");
      expectNoSecret(out, err);
    }
  });
});

describe("configuration problems", () => {
  test("invalid key: exit 2, the loader's text names the key, every problem listed, still a summary line", async () => {
    const d = deployment({ agentEnabled: false });
    fs.appendFileSync(d.config, `[limits]\nmax_list_entries = -1\nbogus_key = 1\n`);
    const r = await runDoctor(d);
    expect(r.code).toBe(2);
    const configLines = r.stdout.split("\n").filter((l) => l.startsWith("config: "));
    expect(configLines.length).toBe(2);
    expect(r.stdout).toContain(`config: FAIL -- CONFIGURATION_ERROR: ${d.config}: limits.`);
    expect(r.stdout).toContain("bogus_key");
    expect(r.stdout).toContain("fix: fix the named key");
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("summary: 2 FAIL, 0 WARN");
    expect(r.stdout).not.toContain("workdir ");
  });

  test("unreadable (missing) config file: exit 2; --json gives the same as a document", async () => {
    const d = deployment({ agentEnabled: false });
    const missing = { ...d, config: path.join(d.root, "nope.toml") };
    const r = await runDoctor(missing);
    expect(r.code).toBe(2);
    expect(r.line("config")).toBe(`config: FAIL -- CONFIGURATION_ERROR: ${missing.config}: not found; fix: check the path, or write a starter file with serverfs init`);
    const j = await runDoctor(missing, ["--json"]);
    expect(j.code).toBe(2);
    const doc = JSON.parse(j.stdout) as { checks: Array<{ id: string; status: string }>; summary: unknown };
    expect(doc.checks.filter((c) => c.status === "FAIL").map((c) => c.id)).toEqual(["config"]);
    expect(doc.summary).toEqual({ fail: 1, warn: 0 });
  });

  test("usage errors go to stderr with exit 2 and print no report", async () => {
    for (const args of [["doctor"], ["doctor", "--config", "a", "--env-file", "b"], ["doctor", "--config", "a", "--frobnicate"]]) {
      const p = Bun.spawn([BUN, CLI, ...args], { stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(code).toBe(2);
      expect(out).toBe("");
      expect(err).toStartWith("serverfs: doctor: USAGE_ERROR: ");
    }
  });
});
