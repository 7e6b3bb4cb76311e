// Cancel → next writer on the same workdir, as a user sees it: the COMPILED `serverfs bridge`, a real
// ACP agent (OpenCode, a devDependency) against the scripted local model, and a shell tool running
// (`SHELL sleep 30`, approved once) when the cancel arrives. Per iteration:
//   cancel RPC        — task.cancel sent → answered (it answers after the proved stop);
//   cancel→accepted   — task.cancel sent → a task.submit on the same workdir accepted (submits are
//                       retried on WORKDIR_BUSY; the accepted one is the next iteration's task);
//   baseline          — task.cancel sent → the tree observed gone by an independent /proc scan (a
//                       worker thread reading every process's environment for the run's private
//                       HOME): the part no Bridge can avoid, so the figures above are read as
//                       overhead over it.
// Target: cancel→accepted ≤ 250 ms p95. `--binary` takes any build, so an older one (main) can be
// run through the same loop for a before/after: there the cancel answers before the stop and the
// submit is retried on WORKDIR_BUSY until the lease comes free.
//
// usage: bun bench/bridge/cancel-resubmit.ts [--binary dist/serverfs-linux-x64] [--iterations 20] [--verbose]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import { startFakeModel } from "../../test/fixtures/acp/fake-model.ts";
import { OPENCODE, OPENCODE_SUPPORTED, writeOpenCodeEnv } from "../../test/fixtures/acp/opencode-env.ts";
import { makeRegistry, makeWorkdir } from "../../test/bridge/helpers.ts";
import { fmtMs, machineLine, percentile } from "../lib/machine.ts";
import { untilBridgeAnswers } from "../lib/bridge-ready.ts";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}
const ROOT = path.resolve(import.meta.dir, "../..");
const BINARY = path.resolve(arg("binary", path.join(ROOT, "dist", `serverfs-${process.platform}-${process.arch}`)));
const N = Math.max(1, Number(arg("iterations", "20")) || 20);
const VERBOSE = process.argv.includes("--verbose");
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);
const now = () => performance.timeOrigin + performance.now();

if (!OPENCODE_SUPPORTED) {
  console.log("skipped: the pinned OpenCode binary is linux-x64 only");
  process.exit(0);
}
if (!fs.existsSync(BINARY)) {
  console.error(`no binary at ${BINARY}: build it with ./node_modules/.bin/bun build/compile.ts linux-x64`);
  process.exit(2);
}

// The independent observer: a worker thread, so its synchronous /proc reads never delay the
// main thread's view of the cancel reply.
const SCANNER = `
const fs = require("node:fs");
const now = () => performance.timeOrigin + performance.now();
function ours(needle) {
  for (const name of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      if (!fs.readFileSync("/proc/" + name + "/environ", "latin1").split("\\0").includes(needle)) continue;
      const stat = fs.readFileSync("/proc/" + name + "/stat", "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") return true;
    } catch {}
  }
  return false;
}
onmessage = (e) => {
  const needle = "HOME=" + e.data.home;
  if (e.data.kind === "present") { postMessage({ present: ours(needle) }); return; }
  while (ours(needle)) {}
  postMessage({ goneAt: now() });
};`;

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-bench-cancel-"));
const model = startFakeModel();
const home = path.join(root, "home");
fs.mkdirSync(home);
const envFile = writeOpenCodeEnv(root, home, model.baseUrl);
const stateDir = path.join(root, "state");
const workdir = path.join(root, "repo");
fs.mkdirSync(workdir);
const cfg = path.join(root, "serverfs.toml");
fs.writeFileSync(
  cfg,
  `[server]\nstate_dir = "${stateDir}"\nlog_level = "ERROR"\n` +
    `[[workdirs]]\nalias = "repo"\npath = "${workdir}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["acp-opencode"]\n` +
    `[agent]\nenabled = true\nprovider_env_file = "${envFile}"\n` +
    `[[agent.acp_profiles]]\nid = "opencode"\ncommand = "${OPENCODE}"\nargs = ["acp"]\nuse_proxy = false\n`,
);
const socketPath = bridgePaths(makeRegistry(stateDir, [makeWorkdir("repo", workdir)])).socketPath;
const bridge = Bun.spawn([BINARY, "bridge", "--config", cfg], { stdout: "ignore", stderr: "inherit" });
const client = new BridgeClient({ path: socketPath }, 60_000);
const scanner = new Worker(URL.createObjectURL(new Blob([SCANNER], { type: "application/javascript" })));
function ask<T>(msg: Record<string, unknown>): Promise<T> {
  return new Promise((resolve) => {
    scanner.onmessage = (e) => resolve(e.data as T);
    scanner.postMessage(msg);
  });
}

const SHELL = "SHELL sleep 30";
const submitParams = { runtime: "acp-opencode", workdir: "repo", path: "", profile: "workspace-write", prompt: SHELL } as const;

async function get(taskId: string, wait = 1): Promise<Record<string, unknown>> {
  return client.call("task.get", { task_id: taskId, wait_seconds: wait }) as Promise<Record<string, unknown>>;
}

/** Approve the shell call, then wait until the tool's `sleep 30` runs. */
async function untilShellRuns(taskId: string): Promise<void> {
  for (let until = Date.now() + 90_000; ; ) {
    const t = await get(taskId);
    if (TERMINAL.has(t.status as string)) throw new Error(`task ended ${String(t.status)} ${String(t.error_code)} before its shell ran`);
    if (t.status === "waiting_for_approval") {
      const req = t.pending_request as { request_id: string; payload: { response_options: Array<{ option_id: string; kind: string }> } };
      const option = req.payload.response_options.find((o) => o.kind === "allow_once")!.option_id;
      await client.call("task.approval.respond", { task_id: taskId, request_id: req.request_id, option_id: option });
      break;
    }
    if (Date.now() > until) throw new Error("no approval request in 90 s");
  }
  for (let until = Date.now() + 60_000; ; await Bun.sleep(10)) {
    const out = Bun.spawnSync(["pgrep", "-f", "-x", "sleep 30"]).stdout.toString().trim();
    if (out.length > 0 && out.split("\n").some((pid) => fs.readFileSync(`/proc/${pid}/environ`, "latin1").includes(`HOME=${home}\0`))) return;
    if (Date.now() > until) throw new Error("the shell tool never started");
  }
}

const cancelRpc: number[] = [];
const toAccepted: number[] = [];
const proofTime: number[] = [];
let busyRetries = 0;
let notFree = 0;
try {
  await untilBridgeAnswers(client);
  let task = (await client.call("task.submit", submitParams)).task_id as string;
  // One warm-up iteration (first launch, sqlite pages, capability snapshot), not counted.
  for (let i = -1; i < N; i++) {
    await untilShellRuns(task);
    if (!(await ask<{ present: boolean }>({ kind: "present", home })).present) throw new Error("the scanner does not see the tree");
    const gone = ask<{ goneAt: number }>({ kind: "gone", home });
    const t0 = now();
    const c = await client.call("task.cancel", { task_id: task });
    const t1 = now();
    if (c.status !== "cancelled") throw new Error(`cancel answered ${String(c.status)}`);
    if (c.workdir_free !== true && i >= 0) notFree++;
    let next = "";
    for (;;) {
      try {
        next = (await client.call("task.submit", submitParams)).task_id as string;
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== "WORKDIR_BUSY") throw err;
        if (i >= 0) busyRetries++;
        await Bun.sleep(1);
      }
    }
    const t2 = now();
    const goneAt = (await gone).goneAt;
    if (VERBOSE) console.error(`iteration ${i}: t0=${t0.toFixed(1)} gone +${(goneAt - t0).toFixed(1)} answered +${(t1 - t0).toFixed(1)} accepted +${(t2 - t0).toFixed(1)}`);
    if (i >= 0) {
      cancelRpc.push(t1 - t0);
      toAccepted.push(t2 - t0);
      proofTime.push(goneAt - t0);
    }
    task = next;
  }
  await client.call("task.cancel", { task_id: task });
} finally {
  scanner.terminate();
  bridge.kill("SIGTERM");
  await bridge.exited;
  model.stop();
  fs.rmSync(root, { recursive: true, force: true });
}

const line = (label: string, xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${label.padEnd(44)} p50 ${fmtMs(percentile(s, 50)).padStart(10)}  p95 ${fmtMs(percentile(s, 95)).padStart(10)}  max ${fmtMs(s[s.length - 1]!).padStart(10)}`;
};
const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
console.log(machineLine());
console.log(`binary: ${path.relative(ROOT, BINARY)}; opencode ${OPENCODE.includes("opencode-linux-x64") ? "(devDependency)" : ""}; ${N} iterations after 1 warm-up`);
console.log(line("baseline: cancel → tree gone (/proc scan)", proofTime));
console.log(line("cancel RPC (answers after the proof)", cancelRpc));
console.log(line("cancel → accepted submit, same workdir", toAccepted));
console.log(`overhead over the baseline: p50 +${fmtMs(p(toAccepted, 50) - p(proofTime, 50))}, p95 +${fmtMs(p(toAccepted, 95) - p(proofTime, 95))}`);
console.log(`WORKDIR_BUSY retries: ${busyRetries} in ${N} iterations; cancel answers with workdir_free=false: ${notFree}`);
console.log(`target cancel → accepted p95 ≤ 250 ms: ${p(toAccepted, 95) <= 250 ? "met" : "NOT met"}`);
