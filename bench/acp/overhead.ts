// What the Agent Bridge adds to one delegated ACP task, end to end, as a user runs it, against a
// bare ACP SDK client driving the same agent directly, in the same run.
//
// serverfs, through MCP (the figure the target is about): an MCP client (bench/lib/mcp-lines.ts:
//   newline-delimited JSON-RPC over the pipes, so the figure is serve's and not an MCP client
//   library's; the SDK's client added ~4 ms a call here) drives a compiled `serverfs serve`, which reaches a compiled `serverfs bridge`; both are started
//   by this bench from one serverfs.toml whose only runtime is an [[agent.acp_profiles]] entry for
//   the fixture agent (test/fixtures/acp/scripted-agent.ts, run by Bun). One task is
//   `submit_agent_task` (profile workspace-write, prompt "text the quick brown fox"), then
//   `get_agent_task` with wait_seconds, again until the view is terminal.
//   submit → done: from sending `submit_agent_task` until the client holds the `succeeded` view
//   with the agent's answer. The Bridge publishes a terminal status only once the agent's process
//   tree is proved stopped, and releases the writer lease in the same step, so "done" covers:
//   serve's checks and its Bridge RPC, admission (writer lease, recovery guard, the queued row made
//   durable before the submit is acknowledged), the contained spawn (in a cgroup of its own where
//   the Bridge may make one), the ACP handshake, the session id persisted, the events stored, the
//   result stored, and the proved stop.
// serverfs, through the Bridge RPC: the same task through the Bridge's socket directly
//   (`task.submit`, then `task.get` with wait_seconds, as `serverfs tasks` does): serve's share is
//   the difference between the two serverfs rows.
// baseline: a bare ACP SDK client (@agentclientprotocol/sdk) spawns the same argv in the same
//   directory, sends initialize, session/new and session/prompt, ends the agent's stdin and awaits
//   its exit. done: it holds the answer and the agent has exited.
//
// Where the time goes: each task is also cut into four phases that both sides have (./phases.ts),
// from the Bridge's own records of it (its state database, read after the task) and the bench's
// clock, and the p50 of each phase is printed for every path with what the candidate adds to it.
// Interleaved: every iteration runs each path once, in an order that rotates, so load drift hits
// all alike. Prints p50/p90 of each, the p50 differences (the target's figure) and the median of
// the per-iteration differences, the CPU time the Bridge and serve spent per task (all threads,
// every thread, from /proc/<pid>/stat: what load inflates far less than latency), the Bridge's and serve's peak RSS (VmHWM), the
// machine and the load average before and after.
// --busy (or BUSY=1): one CPU-bound busy loop per core runs beside the whole measurement.
// BEFORE=path: another compiled serverfs (e.g. main's) measured the same way, interleaved too.
// HISTORY=n: n finished tasks already in each Bridge's state database, as days of use leave them.
// Targets: added at p50 ≤ +5 ms over the baseline, quiet and --busy; Bridge VmHWM ≤ 80 MB. The
// peak includes the executable's own pages, ~5 MB more for a freshly written file: evict both
// builds from the page cache first (posix_fadvise DONTNEED on each file) to compare them.
//
// usage: bun build/compile.ts linux-x64 && bun bench/acp/overhead.ts [iterations] [--busy]
//        [CANDIDATE=dist/serverfs-linux-x64] [BEFORE=path/to/other/serverfs] [HISTORY=10000]
import * as acp from "@agentclientprotocol/sdk";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { openStateDatabase } from "../../src/bridge/store/db.ts";
import { deploymentPaths } from "../../src/config/paths.ts";
import { untilBridgeAnswers } from "../lib/bridge-ready.ts";
import { fmtMs, machineLine, percentile } from "../lib/machine.ts";
import { openLineMcp, type LineMcp } from "../lib/mcp-lines.ts";
import { rssSplitMb } from "../bridge/common.ts";
import { processCpuMs, vmHwmKiB } from "../lib/serve-session.ts";
import { phaseTable, TaskRecords, wallNow, type Phases } from "./phases.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const FIXTURE = path.join(ROOT, "test/fixtures/acp/scripted-agent.ts");
const PROMPT = "text the quick brown fox";
const ANSWER = "the quick brown fox";
const RUNTIME = "acp-bench";
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

const args = process.argv.slice(2);
const BUSY = args.includes("--busy") || process.env.BUSY === "1";
const ITERATIONS = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
const WARMUP = 3;
const CANDIDATE = process.env.CANDIDATE ?? path.join(ROOT, "dist", `serverfs-${process.platform}-${process.arch}`);
const BEFORE = process.env.BEFORE;
/** Finished tasks already in each Bridge's state database (default none: a fresh deployment). */
const HISTORY = Number(process.env.HISTORY ?? 0);

/** The agent, started the same way by the baseline and by the Bridge (the profile's command + args). */
const AGENT = [process.execPath, FIXTURE];

/** One task's time, and its four phases (./phases.ts) where they could be read. */
interface Timed {
  ms: number;
  phases: Phases | null;
}

async function bareClient(cwd: string): Promise<Timed> {
  const t0 = performance.now();
  const proc = Bun.spawn(AGENT, { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const spawned = performance.now();
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      proc.stdin.write(chunk);
      await proc.stdin.flush();
    },
  });
  let text = "";
  const conn = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") text += params.update.content.text;
    })
    .connect(acp.ndJsonStream(output, proc.stdout));
  await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const prompted = performance.now();
  await conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: PROMPT }] });
  proc.stdin.end();
  await proc.exited;
  const done = performance.now();
  if (text !== ANSWER) throw new Error("baseline got the wrong answer");
  return { ms: done - t0, phases: [spawned - t0, prompted - spawned, done - prompted, 0] };
}

/** One compiled serverfs: its Bridge, a serve with an MCP client, and a Bridge RPC client. */
interface Deployment {
  label: string;
  binary: string;
  workdir: string;
  bridge: ReturnType<typeof Bun.spawn>;
  rpc: BridgeClient;
  /** The Bridge's own records of each task, read after the task. */
  records: TaskRecords;
  serve: LineMcp;
  stop(): Promise<void>;
}

/**
 * `count` finished tasks in the state database before the Bridge starts, one a minute back from
 * now (a Bridge a few days into its default 7-day retention), with manifests and answers of the
 * sizes real ones have.
 */
function seedHistory(stateDir: string, count: number): void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const db = openStateDatabase(deploymentPaths({ server: { state_dir: stateDir } }).dbPath);
  const insert = db.query(
    "INSERT INTO tasks (task_id, runtime, workdir_alias, relative_cwd, profile, status, created_at, updated_at, completed_at, manifest_json, final_response, result_storage) VALUES (?, ?, 'repo', '', 'workspace-write', 'succeeded', ?, ?, ?, ?, ?, 'inline')",
  );
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const at = new Date(now - (i + 1) * 60_000).toISOString();
      insert.run(`agt_history_${i}`, RUNTIME, at, at, at, JSON.stringify({ schema_version: 3, padding: "m".repeat(1400) }), "a".repeat(500));
    }
  })();
  db.close();
}

async function deploy(label: string, binary: string): Promise<Deployment> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-acp-bench-"));
  const stateDir = path.join(root, "state");
  const workdir = path.join(root, "repo");
  fs.mkdirSync(workdir);
  const toml = path.join(root, "serverfs.toml");
  fs.writeFileSync(
    toml,
    `[server]\nstate_dir = ${JSON.stringify(stateDir)}\nlog_level = "ERROR"\n` +
      `[[workdirs]]\nalias = "repo"\npath = ${JSON.stringify(workdir)}\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = [${JSON.stringify(RUNTIME)}]\n` +
      `[agent]\nenabled = true\n` +
      `[[agent.acp_profiles]]\nid = "bench"\ncommand = ${JSON.stringify(AGENT[0])}\nargs = [${JSON.stringify(AGENT[1])}]\nuse_proxy = false\n`,
  );
  if (HISTORY > 0) seedHistory(stateDir, HISTORY);
  const bridge = Bun.spawn([binary, "bridge", "--config", toml], { stdout: "ignore", stderr: "ignore" });
  const statePaths = deploymentPaths({ server: { state_dir: stateDir } });
  const rpc = new BridgeClient({ path: statePaths.socketPath }, 60_000);
  await untilBridgeAnswers(rpc);
  const serve = await openLineMcp(binary, toml, root);
  const records = new TaskRecords(statePaths.dbPath);
  return {
    label,
    binary,
    workdir,
    bridge,
    rpc,
    records,
    serve,
    async stop() {
      records.close();
      await serve.close().catch(() => {});
      bridge.kill("SIGTERM");
      await bridge.exited;
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

function structured(r: Awaited<ReturnType<LineMcp["call"]>>, tool: string): Record<string, unknown> {
  if (r.isError) throw new Error(`${tool} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r.structuredContent as Record<string, unknown>;
}

function checkDone(view: Record<string, unknown>, label: string): void {
  if (view.status !== "succeeded" || view.final_response !== ANSWER) {
    throw new Error(`${label}: the task ended ${String(view.status)} ${String(view.error_code)}`);
  }
}

async function throughMcp(d: Deployment): Promise<Timed> {
  const submittedAt = wallNow();
  const t0 = performance.now();
  const submitted = structured(await d.serve.call("submit_agent_task", { runtime: RUNTIME, workdir: "repo", prompt: PROMPT, profile: "workspace-write" }), "submit_agent_task");
  let view = submitted;
  while (!TERMINAL.has(String(view.status))) {
    view = structured(await d.serve.call("get_agent_task", { task_id: submitted.task_id, wait_seconds: 30 }), "get_agent_task");
  }
  const ms = performance.now() - t0;
  const doneAt = wallNow();
  checkDone(view, `${d.label} MCP`);
  return { ms, phases: d.records.phases(String(submitted.task_id), submittedAt, doneAt) };
}

async function throughRpc(d: Deployment): Promise<Timed> {
  const submittedAt = wallNow();
  const t0 = performance.now();
  const { task_id } = await d.rpc.call("task.submit", { runtime: RUNTIME, workdir: "repo", path: "", profile: "workspace-write", prompt: PROMPT });
  let view = await d.rpc.call("task.get", { task_id, wait_seconds: 0 });
  while (!TERMINAL.has(String(view.status))) view = await d.rpc.call("task.get", { task_id, wait_seconds: 30 });
  const ms = performance.now() - t0;
  const doneAt = wallNow();
  checkDone(view as Record<string, unknown>, `${d.label} RPC`);
  return { ms, phases: d.records.phases(task_id, submittedAt, doneAt) };
}

function loadAverage(): string {
  try {
    return fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return os.loadavg().map((l) => l.toFixed(2)).join(" ");
  }
}

/**
 * One CPU-bound process per core, for the loaded variant, each in a session of its own, as
 * another user's job would be. With the kernel's autogroup scheduling (sched_autogroup_enabled=1
 * here) CPU is shared between sessions first: loops left in this bench's session slowed only the
 * baseline's agent, which runs in that session too, while the Bridge starts its agents in
 * sessions of their own (the baseline then read 50 ms slower than the Bridge).
 */
function startBusyLoops(): Array<ReturnType<typeof Bun.spawn>> {
  return os.cpus().map(() => Bun.spawn([process.execPath, "-e", BUSY_LOOP], { stdout: "ignore", stderr: "ignore", detached: true }));
}

/**
 * Spins until this bench is gone: a bench killed before its cleanup (a timeout, ^C on targets.ts)
 * left its loops spinning in their own sessions, and every later measurement on the machine ran
 * two cores short. A loop notices its parent's end within a few million iterations.
 */
const BUSY_LOOP = `const parent = process.ppid; for (let i = 1; ; i++) if ((i & 0x3fffff) === 0 && process.ppid !== parent) process.exit(0);`;

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const deployments: Deployment[] = [];
  const busy = BUSY ? startBusyLoops() : [];
  const samples = new Map<string, number[]>();
  try {
    deployments.push(await deploy("candidate", CANDIDATE));
    if (BEFORE) deployments.push(await deploy("before", BEFORE));
    const cwd = deployments[0]!.workdir;
    type Path = { name: string; run: () => Promise<Timed> };
    const paths: Path[] = [{ name: "baseline", run: () => bareClient(cwd) }];
    for (const d of deployments) {
      paths.push({ name: `${d.label} MCP`, run: () => throughMcp(d) });
      paths.push({ name: `${d.label} RPC`, run: () => throughRpc(d) });
    }
    // The floor of one call on each way in: an MCP ping to serve, a bridge.status to the Bridge.
    const floors = { mcp: [] as number[], rpc: [] as number[] };
    const floor = async (d: Deployment) => {
      let t0 = performance.now();
      await d.serve.ping();
      floors.mcp.push(performance.now() - t0);
      t0 = performance.now();
      await d.rpc.call("bridge.status", {});
      floors.rpc.push(performance.now() - t0);
    };
    const phases = new Map<string, Phases[]>();
    for (const p of paths) {
      samples.set(p.name, []);
      phases.set(p.name, []);
    }
    const cpuAtStart = new Map<Deployment, { bridge: number; serve: number }>();
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      if (i === WARMUP) for (const d of deployments) cpuAtStart.set(d, { bridge: processCpuMs(d.bridge.pid), serve: processCpuMs(d.serve.pid) });
      for (let k = 0; k < paths.length; k++) {
        const p = paths[(i + k) % paths.length]!;
        const t = await p.run();
        if (i >= WARMUP) {
          samples.get(p.name)!.push(t.ms);
          if (t.phases !== null) phases.get(p.name)!.push(t.phases);
        }
      }
      if (i >= WARMUP) await floor(deployments[0]!);
    }
    const cpuPerTask = new Map(
      deployments.map((d) => {
        const at = cpuAtStart.get(d)!;
        // The Bridge ran both paths' tasks; serve only the MCP path's.
        return [d, { bridge: (processCpuMs(d.bridge.pid) - at.bridge) / (2 * ITERATIONS), serve: (processCpuMs(d.serve.pid) - at.serve) / ITERATIONS }];
      }),
    );
    console.log(machineLine());
    console.log(
      `iterations: ${ITERATIONS} interleaved (after ${WARMUP} warm-up), ${BUSY ? `${busy.length} CPU-bound busy loops beside it (one per core)` : "no busy loops"}, ` +
        `${HISTORY} finished tasks in each state database before the start; ` +
        `load average before ${loadBefore}, after ${loadAverage()}`,
    );
    const p50 = (name: string) => percentile([...samples.get(name)!].sort((a, b) => a - b), 50);
    for (const [name, s] of samples) {
      const sorted = [...s].sort((a, b) => a - b);
      console.log(`${name.padEnd(16)} submit→done p50 ${fmtMs(percentile(sorted, 50))}  p90 ${fmtMs(percentile(sorted, 90))}`);
    }
    const sortedP50 = (v: number[]) => percentile([...v].sort((a, b) => a - b), 50);
    console.log(`one call's floor (candidate): MCP ping to serve p50 ${fmtMs(sortedP50(floors.mcp))}, Bridge RPC bridge.status p50 ${fmtMs(sortedP50(floors.rpc))}`);
    const base = p50("baseline");
    /** Median of the per-iteration differences: each pair ran back to back, so drift cancels. */
    const paired = (name: string) => {
      const ours = samples.get(name)!;
      const theirs = samples.get("baseline")!;
      return percentile(ours.map((v, i) => v - theirs[i]!).sort((a, b) => a - b), 50);
    };
    const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${fmtMs(ms)}`;
    for (const d of deployments) {
      const mcp = p50(`${d.label} MCP`) - base;
      const rpc = p50(`${d.label} RPC`) - base;
      const cpu = cpuPerTask.get(d)!;
      // File pages are the executable's own code, whose count depends on the page cache
      // (bench/bridge/rss.bench.ts): the anonymous part is the Bridge's.
      const split = rssSplitMb(d.bridge.pid);
      console.log(
        `${d.label} (${path.relative(ROOT, d.binary) || d.binary}): added at p50 through MCP ${mcp >= 0 ? "+" : ""}${fmtMs(mcp)} ` +
          `(target ≤ +5 ms: ${mcp <= 5 ? "met" : "NOT met"}), through the Bridge RPC ${rpc >= 0 ? "+" : ""}${fmtMs(rpc)}; ` +
          `peak RSS (VmHWM) Bridge ${(vmHwmKiB(d.bridge.pid) / 1024).toFixed(1)} MB (target ≤ 80 MB: ${vmHwmKiB(d.bridge.pid) <= 80 * 1024 ? "met" : "NOT met"}; ` +
          `at the end anonymous ${split.anon.toFixed(1)} + file pages ${split.file.toFixed(1)} MB), ` +
          `serve ${(vmHwmKiB(d.serve.pid) / 1024).toFixed(1)} MB`,
      );
      console.log(
        `${d.label}: median of paired differences through MCP ${signed(paired(`${d.label} MCP`))}, through the Bridge RPC ${signed(paired(`${d.label} RPC`))}; ` +
          `CPU per task: Bridge ${fmtMs(cpu.bridge)}, serve ${fmtMs(cpu.serve)}`,
      );
    }
    const missing = [...phases].filter(([, list]) => list.length < ITERATIONS).map(([name, list]) => `${name} ${ITERATIONS - list.length}`);
    for (const line of phaseTable(phases, "baseline")) console.log(line);
    if (missing.length > 0) console.log(`  (tasks whose records could not be read, left out of the phases: ${missing.join(", ")})`);
    // for bench/targets.ts (rows 9a/9b): the candidate (the first deployment), its contract at the top of that file
    const candidate = deployments[0];
    if (candidate !== undefined) {
      const ours = p50(`${candidate.label} MCP`);
      console.log(
        `RESULT ${JSON.stringify({ bench: "acp-overhead", iterations: ITERATIONS, ours_ms: ours, baseline_ms: base, added_ms: ours - base, busy: BUSY, bridge_peak_rss_kib: vmHwmKiB(candidate.bridge.pid), serve_peak_rss_kib: vmHwmKiB(candidate.serve.pid) })}`,
      );
    }
  } finally {
    for (const p of busy) p.kill("SIGKILL");
    for (const d of deployments) await d.stop();
  }
}

await main();
