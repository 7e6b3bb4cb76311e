// Runtime checks: ACP profiles without launching anything (command, capability snapshots taken
// by a real task through a real Bridge, stale after a profile change), `--probe-acp` against the
// fixture agents (healthy, wrong protocol version, auth required, silent initialize, an agent
// that ignores stdin EOF) with the process tree proved stopped, and native runtimes' bounded
// `--version` probe with its process tree stopped.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { acpCommandCheck } from "../../src/doctor/checks/acp-profiles.ts";
import { boundedRun } from "../../src/doctor/bounded-run.ts";
import { acpFingerprint } from "../../src/config/fingerprint.ts";
import { resolveExecutable } from "../../src/config/executable.ts";
import { BUN, pidAlive, processesWith } from "../support/proc.ts";
import { ACP_FIXTURES, tempDir, makeDeployment, runDoctor, startBridge, type Deployment } from "./helpers.ts";
import { cleanupTempDirs } from "../support/temp.ts";

// Every deployment and temp dir is a test/support temp dir: removed here, or at exit at the latest.
afterAll(cleanupTempDirs);

const q = (s: string) => JSON.stringify(s);

function profileToml(id: string, fixture: string, args: string[] = [], extra = ""): string {
  return `[[agent.acp_profiles]]\nid = ${q(id)}\ncommand = ${q(BUN)}\nargs = [${[path.join(ACP_FIXTURES, fixture), ...args].map(q).join(", ")}]\n${extra}`;
}

function deployment(tail: string, runtimes: string[] = ["fake"]): Deployment {
  const d = makeDeployment({
    tail,
    workdirToml: { repo: `read_only = false\nagent_mode = "workspace-write"\nagent_runtimes = [${runtimes.map(q).join(", ")}]\n` },
  });
  return d;
}

function script(dir: string, name: string, body: string, mode = 0o755): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode });
  fs.chmodSync(file, mode);
  return file;
}

describe("ACP profiles without launching", () => {
  test("a missing or non-executable command is refused by the loader: exit 2 naming agent.acp_profiles[0].command", async () => {
    const d = deployment(`[[agent.acp_profiles]]\nid = "gone"\ncommand = "/nonexistent/agent"\n`);
    const r = await runDoctor(d);
    expect(r.code).toBe(2);
    expect(r.line("config")).toContain("agent.acp_profiles[0].command: no file exists at this path");

    const plain = script(d.root, "agent.sh", "exit 0", 0o644);
    fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace("/nonexistent/agent", plain));
    const r2 = await runDoctor(d);
    expect(r2.code).toBe(2);
    expect(r2.line("config")).toContain("agent.acp_profiles[0].command: is not executable by this user");
  });

  test("the command check itself (a file removed or made non-executable after the config was loaded): FAIL with the key to fix", () => {
    const dir = tempDir("sfs-doctor-cmd-");
    const file = script(dir, "agent", "exit 0");
    const profile = { id: "x", runtime: "acp-x", command: file, args: ["acp"], use_proxy: false, probe_timeout_seconds: 5, shutdown_timeout_seconds: 1, fingerprint: acpFingerprint({ id: "x", command: file, args: ["acp"], use_proxy: false }) };
    expect(acpCommandCheck(profile, 3)).toEqual({ id: "acp.x.command", label: "acp x command", status: "OK", detail: `${file} (1 argument; not launched)` });
    fs.chmodSync(file, 0o644);
    expect(acpCommandCheck(profile, 3)).toMatchObject({ status: "FAIL", detail: `${file} is not executable by this user`, hint: expect.stringContaining("agent.acp_profiles[3].command") });
    fs.rmSync(file);
    expect(acpCommandCheck(profile, 3)).toMatchObject({ status: "FAIL", detail: `${file} no file exists at this path` });
  });

  test("capability snapshot: unmeasured, then measured by a real task through the Bridge, then stale after the profile's args change", async () => {
    const tag = `--tag=${crypto.randomUUID()}`;
    const d = deployment(profileToml("echo", "scripted-agent.ts", ["--resume", tag]), ["fake", "acp-echo"]);
    const b = await startBridge(d);
    try {
      const before = await runDoctor(d);
      expect(before.line("acp echo command")).toBe(`acp echo command: OK -- ${BUN} (3 arguments; not launched)`);
      expect(before.line("acp echo capabilities")).toBe("acp echo capabilities: OK -- not measured yet (measured by the first task on this runtime)");
      const id = (await b.client.call("task.submit", { runtime: "acp-echo", workdir: "repo", path: "", profile: "workspace-write", prompt: "text hi there" })).task_id as string;
      let status = "";
      while (status !== "succeeded") {
        status = String((await b.client.call("task.get", { task_id: id, wait_seconds: 1 })).status);
        if (status === "failed") throw new Error("task failed");
      }
      const measured = await runDoctor(d);
      expect(measured.line("acp echo capabilities")).toMatch(
        /^acp echo capabilities: OK -- measured \S+: ACP v1, scripted-agent 1\.2\.3, loadSession=no, resume=yes, 0 model\(s\)$/,
      );
    } finally {
      await b.stop();
    }
    fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace(`"--resume"`, `"--load"`));
    const stale = await runDoctor(d);
    expect(stale.line("acp echo capabilities")).toMatch(/^acp echo capabilities: WARN -- stale: the snapshot measured \S+ was taken with a different command, args or use_proxy/);
    // Nothing was launched by the plain doctor: no agent process runs with that fixture.
    expect(processesWith(tag)).toEqual([]);
  }, 30_000);
});

describe("--probe-acp", () => {
  test("a healthy agent: protocol, capabilities, auth, continuation support, and the stop proved; the throwaway dir is gone", async () => {
    const tag = `--tag=${crypto.randomUUID()}`;
    const d = deployment(profileToml("good", "scripted-agent.ts", ["--load", "--resume", "--models=m1,m2", tag]));
    const r = await runDoctor(d, ["--probe-acp"]);
    expect(r.line("acp good handshake")).toBe(
      "acp good handshake: OK -- ACP v1; scripted-agent 1.2.3; loadSession=yes; session capabilities: resume; prompt: text; mcp: stdio; auth methods: none",
    );
    expect(r.line("acp good session")).toBe("acp good session: OK -- session/new answered; auth required: no; continuation: session/resume; 2 model(s) offered");
    expect(r.line("acp good stop")).toMatch(/^acp good stop: OK -- process tree stopped, proved \((already-exited|term|kill), \d+ ms\)$/);
    expect(processesWith(tag)).toEqual([]);
    expect(fs.readdirSync(d.doctorTmp)).toEqual([]);
    // Without --probe-acp nothing is started.
    const plain = await runDoctor(d);
    expect(plain.stdout).not.toContain("acp good handshake");
  }, 30_000);

  test("wrong protocol version: FAIL naming the version the agent offered", async () => {
    const d = deployment(profileToml("v2", "wrong-version.ts"));
    const r = await runDoctor(d, ["--probe-acp"]);
    expect(r.code).toBe(1);
    expect(r.line("acp v2 handshake")).toBe(
      "acp v2 handshake: FAIL -- the agent answered protocol version 2; serverfs speaks ACP v1 only (AGENT_ACP_PROTOCOL_UNSUPPORTED); fix: install an agent release that supports ACP protocol version 1, or remove this profile",
    );
    expect(r.line("acp v2 stop")).toContain("OK -- process tree stopped, proved");
  }, 30_000);

  test("an agent that needs auth: FAIL with its auth methods and how to sign in; the agent's own error text (a path) is not shown", async () => {
    const d = deployment(profileToml("locked", "auth-required.ts"));
    const r = await runDoctor(d, ["--probe-acp"]);
    const j = await runDoctor(d, ["--probe-acp", "--json"]);
    expect(r.code).toBe(1);
    expect(r.line("acp locked handshake")).toContain("OK -- ACP v1; fixture 1.0.0; ");
    expect(r.line("acp locked session")).toBe(
      "acp locked session: FAIL -- auth required: the agent refused session/new until it is signed in (AGENT_AUTH_REQUIRED); auth methods: Log in; fix: sign in with the agent's own tool as the Bridge user (or put its API key in the provider env file), then run doctor --probe-acp again",
    );
    for (const out of [r.stdout, r.stderr, j.stdout, j.stderr]) expect(out).not.toContain(".secret-token");
  }, 30_000);

  test("an agent that never answers initialize: FAIL after probe_timeout_seconds, and its tree is stopped", async () => {
    const tag = `--tag=${crypto.randomUUID()}`;
    const d = deployment(profileToml("mute", "hang.ts", ["--in=initialize", tag], "probe_timeout_seconds = 1\nshutdown_timeout_seconds = 1\n"));
    // doctor returning at all proves the bound (a hang fails the test's own timeout)
    const r = await runDoctor(d, ["--probe-acp"]);
    expect(r.line("acp mute handshake")).toContain("FAIL -- no answer to initialize within 1 s (AGENT_ACP_LAUNCH_FAILED)");
    expect(r.line("acp mute stop")).toMatch(/OK -- process tree stopped, proved \((term|kill), \d+ ms\)/);
    expect(processesWith(tag)).toEqual([]);
  }, 30_000);

  test("an agent that ignores stdin EOF is still stopped with proof (TERM after the polite close)", async () => {
    const tag = `--tag=${crypto.randomUUID()}`;
    const d = deployment(profileToml("stubborn", "hang.ts", [tag], "shutdown_timeout_seconds = 1\n"));
    const r = await runDoctor(d, ["--probe-acp"]);
    expect(r.line("acp stubborn session")).toContain("OK -- session/new answered");
    expect(r.line("acp stubborn stop")).toMatch(/OK -- process tree stopped, proved \((term|kill), \d+ ms\)/);
    expect(processesWith(tag)).toEqual([]);
  }, 30_000);
});

describe("native runtimes", () => {
  test("found on disk and answering --version: OK with the version; missing: FAIL; failing --version: FAIL", async () => {
    const bin = tempDir("sfs-doctor-bin-");
    const codex = script(bin, "codex", `echo "codex-cli 9.9.9"`);
    const claude = script(bin, "claude", `echo broken >&2; exit 3`);
    const d = deployment(
      "",
    );
    fs.writeFileSync(
      d.config,
      fs
        .readFileSync(d.config, "utf8")
        .replace("enable_fake_runtime = true\n", `enable_fake_runtime = true\n[agent.codex]\nenabled = true\nbin = ${q(codex)}\nuse_proxy = false\n[agent.claude]\nenabled = true\nbin = ${q(claude)}\n[agent.qoder]\nenabled = true\nbin = "qodercli-not-installed-here"\n`),
    );
    const r = await runDoctor(d);
    expect(r.line("runtime codex")).toBe(`runtime codex: OK -- ${codex}: codex-cli 9.9.9`);
    expect(r.line("runtime claude")).toBe(
      `runtime claude: FAIL -- ${claude} --version exited with 3; fix: run '${claude} --version' as the Bridge user and fix what it reports`,
    );
    expect(r.line("runtime qoder")).toContain("FAIL -- 'qodercli-not-installed-here' is not on PATH; fix: install qoder for the Bridge user");
    // A bare name is looked up on PATH.
    fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace(`bin = ${q(codex)}`, `bin = "codex"`));
    const onPath = await runDoctor(d, [], { PATH: `${bin}:${process.env.PATH ?? ""}` });
    expect(onPath.line("runtime codex")).toBe(`runtime codex: OK -- ${codex}: codex-cli 9.9.9`);
  }, 30_000);

  test("doctor and the Bridge use one lookup: a bare name reachable only through a relative PATH entry is not found by either", async () => {
    const bin = tempDir("sfs-doctor-bin-");
    script(bin, "codex", `echo "codex-cli 9.9.9"`);
    const relative = path.relative(process.cwd(), bin);
    const d = deployment("");
    fs.writeFileSync(
      d.config,
      fs.readFileSync(d.config, "utf8").replace("enable_fake_runtime = true\n", `enable_fake_runtime = true\n[agent.codex]\nenabled = true\nbin = "codex"\nuse_proxy = false\n`),
    );
    const PATH = `${relative}:/nonexistent-sfs-dir`;
    expect(resolveExecutable("codex", PATH)).toBeNull();
    const r = await runDoctor(d, [], { PATH });
    expect(r.line("runtime codex")).toContain("FAIL -- 'codex' is not on PATH");
  }, 30_000);

  test("a --version that hangs and forks a setsid grandchild: bounded, then the whole tree is stopped with proof", async () => {
    const bin = tempDir("sfs-doctor-bin-");
    const pidFile = path.join(bin, "pids");
    const slow = script(bin, "slow", `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' & sleep 300`);
    const run = await boundedRun([slow, "--version"], 500, 200);
    expect(run.outcome).toBe("timeout");
    expect(run.evidence?.proved).toBe(true);
    const grandchild = Number(fs.readFileSync(pidFile, "utf8").trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(pidAlive(grandchild)).toBe(false);
  }, 30_000);
});
