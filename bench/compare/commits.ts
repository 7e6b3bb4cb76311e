// A restructuring must not cost the user anything: this compares two builds of serverfs — a base
// commit and the working tree — on cold start (spawn -> answered initialize + tools/list) and on
// the Bridge RPC round trip (one unix-socket connection per `bridge.status` call, as serve's agent
// tools connect), interleaved in one run on one machine.
//
// Usage: bun bench/compare/commits.ts [--base REV] [--runs N] [--calls N]
//   --base   the commit to compare against (default HEAD~1)
//   --runs   cold starts per build (default 30)
//   --calls  RPC round trips per build and round (default 1000, in 5 interleaved rounds)
//
// Both builds are compiled with the project's own build/compile.ts (the release flags); the base
// is checked out into a temporary git worktree that shares this checkout's node_modules.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fmtMs, machineLine, median, percentile } from "../lib/machine.ts";

const ROOT = path.resolve(import.meta.dir, "../..");

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}
const BASE = arg("base", "HEAD~1");
const RUNS = Math.max(5, Number(arg("runs", "30")) || 30);
const CALLS = Math.max(100, Number(arg("calls", "1000")) || 1000);
const ROUNDS = 5;

function must(cmd: string[], cwd: string, what: string): string {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}): ${r.stderr.slice(-400)}`);
  return r.stdout.trim();
}

/** Compile the linux-x64 binary of `checkout` and copy it to `out`. */
function build(checkout: string, out: string): void {
  must([process.execPath, "build/compile.ts", `${process.platform}-${process.arch}`], checkout, `build in ${checkout}`);
  fs.copyFileSync(path.join(checkout, "dist", `serverfs-${process.platform}-${process.arch}`), out);
  fs.chmodSync(out, 0o755);
}

const START_FRAMES =
  [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
  ]
    .map((f) => JSON.stringify(f))
    .join("\n") + "\n";

async function coldStart(binary: string, tree: string): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([binary, "serve", "--workdir", `bench=${tree}:rw`], { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(START_FRAMES);
  proc.stdin.flush();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let ms = -1;
  while (ms < 0) {
    const { value, done } = await reader.read();
    if (done) throw new Error("serve exited before answering tools/list");
    buffered += decoder.decode(value, { stream: true });
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const msg = JSON.parse(buffered.slice(0, nl)) as { id?: number };
      buffered = buffered.slice(nl + 1);
      if (msg.id === 2) ms = performance.now() - started;
    }
  }
  reader.releaseLock();
  proc.stdin.end();
  if ((await Promise.race([proc.exited, Bun.sleep(5000).then(() => null)])) === null) proc.kill("SIGKILL");
  await proc.exited;
  return ms;
}

interface Bridge {
  socket: string;
  stop(): Promise<void>;
}

async function startBridge(binary: string, dir: string): Promise<Bridge> {
  const state = path.join(dir, "state");
  const work = path.join(dir, "w");
  fs.mkdirSync(work, { recursive: true });
  const cfg = path.join(dir, "serverfs.toml");
  fs.writeFileSync(
    cfg,
    `[server]\nstate_dir = "${state}"\nlog_level = "ERROR"\n` +
      `[[workdirs]]\nalias = "w"\npath = "${work}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` +
      `[agent]\nenabled = true\nenable_fake_runtime = true\n`,
  );
  const proc = Bun.spawn([binary, "bridge", "--config", cfg], { stdout: "ignore", stderr: "ignore" });
  for (let i = 0; i < 400; i++) {
    const socket = findSocket(state);
    if (socket !== null && (await roundTrip(socket).then(() => true, () => false))) {
      return {
        socket,
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
    await Bun.sleep(25);
  }
  proc.kill("SIGKILL");
  throw new Error("the Bridge did not start");
}

/** The Bridge's socket under its state dir (its exact name is a deployment detail of each build). */
function findSocket(dir: string): string | null {
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const e of names) {
    const p = path.join(dir, e.name);
    if (e.isSocket()) return p;
    if (e.isDirectory()) {
      const found = findSocket(p);
      if (found !== null) return found;
    }
  }
  return null;
}

let requestSeq = 0;
/** One connection, one `bridge.status` request, one reply line: milliseconds from connect to reply. */
function roundTrip(socket: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const s = net.connect({ path: socket });
    let buf = "";
    const line = `${JSON.stringify({ protocol_version: 1, request_id: `b${++requestSeq}`, method: "bridge.status", params: {} })}\n`;
    s.on("connect", () => s.write(line));
    s.on("error", reject);
    s.on("data", (d) => {
      buf += d.toString();
      if (!buf.includes("\n")) return;
      const ms = performance.now() - t0;
      s.destroy();
      const reply = JSON.parse(buf.slice(0, buf.indexOf("\n"))) as { ok?: boolean };
      if (reply.ok !== true) reject(new Error("bridge.status failed"));
      else resolve(ms);
    });
  });
}

async function main(): Promise<void> {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-commits-")));
  const baseTree = path.join(tmp, "base-checkout");
  const baseRev = must(["git", "rev-parse", "--short", BASE], ROOT, "git rev-parse");
  const headRev = must(["git", "rev-parse", "--short", "HEAD"], ROOT, "git rev-parse");
  const dirty = must(["git", "status", "--porcelain", "--untracked-files=no"], ROOT, "git status") !== "";
  try {
    console.log(`building base ${baseRev} and the working tree (${headRev}${dirty ? " + uncommitted changes" : ""}) ...`);
    must(["git", "worktree", "add", "--detach", baseTree, baseRev], ROOT, "git worktree add");
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(baseTree, "node_modules"));
    const bins = { base: path.join(tmp, "serverfs-base"), head: path.join(tmp, "serverfs-head") };
    build(baseTree, bins.base);
    build(ROOT, bins.head);

    const tree = path.join(tmp, "tree");
    fs.mkdirSync(path.join(tree, "docs"), { recursive: true });
    fs.writeFileSync(path.join(tree, "README.md"), "hello\n");

    const starts = { base: [] as number[], head: [] as number[] };
    await coldStart(bins.base, tree);
    await coldStart(bins.head, tree);
    for (let i = 0; i < RUNS; i++) {
      starts.base.push(await coldStart(bins.base, tree));
      starts.head.push(await coldStart(bins.head, tree));
    }

    const rpc = { base: [] as number[], head: [] as number[] };
    const bridges = { base: await startBridge(bins.base, path.join(tmp, "b-base")), head: await startBridge(bins.head, path.join(tmp, "b-head")) };
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const which of ["base", "head"] as const) {
          const samples: number[] = [];
          for (let i = 0; i < CALLS / ROUNDS; i++) samples.push(await roundTrip(bridges[which].socket));
          rpc[which].push(...samples.slice(Math.floor(samples.length / 10))); // drop each round's warm-up
        }
      }
    } finally {
      await bridges.base.stop();
      await bridges.head.stop();
    }

    const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
    console.log(machineLine());
    console.log(`base ${baseRev} vs head ${headRev}${dirty ? "+dirty" : ""}; ${RUNS} cold starts and ${rpc.base.length} RPC samples each, interleaved`);
    console.log(`cold start, median: base ${fmtMs(median(starts.base))}, head ${fmtMs(median(starts.head))}, ratio ${(median(starts.head) / median(starts.base)).toFixed(3)}x`);
    console.log(`RPC round trip p50: base ${fmtMs(p(rpc.base, 50))}, head ${fmtMs(p(rpc.head, 50))}, ratio ${(p(rpc.head, 50) / p(rpc.base, 50)).toFixed(3)}x`);
    console.log(`RPC round trip p99: base ${fmtMs(p(rpc.base, 99))}, head ${fmtMs(p(rpc.head, 99))}, ratio ${(p(rpc.head, 99) / p(rpc.base, 99)).toFixed(3)}x`);
  } finally {
    spawnSync("git", ["worktree", "remove", "--force", baseTree], { cwd: ROOT, stdio: "ignore" });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
