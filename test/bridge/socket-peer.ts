// Test-side tools for the socket bound tests: a real Bridge process with chosen socket bounds
// (test/fixtures/bridge/socket-bounds.ts), its RSS from /proc, and a raw peer that can misbehave.
import fs from "node:fs";
import path from "node:path";
import type { SocketBounds } from "../../src/bridge/ipc/bounds.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup } from "./helpers.ts";

const FIXTURE = path.join(import.meta.dir, "..", "fixtures", "bridge", "socket-bounds.ts");

export interface BridgeProcess {
  socket: string;
  pid: number;
  logFile: string;
  /** Log lines of the Bridge so far, parsed. */
  logs(): Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

function nofile(): { soft: number; hard: number } {
  const line = fs.readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"));
  const [soft, hard] = (line?.split(/\s+/) ?? []).slice(3, 5).map((v) => (v === "unlimited" ? Infinity : Number(v)));
  return { soft: soft ?? 0, hard: hard ?? 0 };
}

/** prlimit's --nofile value for at least `n`: only the soft limit when the hard one allows it. */
const nofileSpec = (n: number) => (nofile().hard >= n ? `--nofile=${n}:` : `--nofile=${n}:${n}`);

/** Raise this test process's descriptor limit to at least `n` (prlimit; raising the hard limit needs root). */
export function ensureOwnNofile(n: number): void {
  if (nofile().soft >= n) return;
  const r = Bun.spawnSync(["prlimit", `--pid=${process.pid}`, nofileSpec(n)]);
  if (r.exitCode !== 0 || nofile().soft < n) throw new Error(`cannot raise the open-files limit to ${n} (try ulimit -n ${n})`);
}

/** Start a real Bridge process; with `nofile` it gets at least that many descriptors (prlimit). */
export async function spawnBridge(bounds: Partial<SocketBounds>, minFiles = 0): Promise<BridgeProcess> {
  const root = tempDir("sfs-sockb-");
  const stateDir = path.join(root, "state");
  const repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  const logFile = path.join(root, "bridge.log");
  const argv = [process.execPath, FIXTURE, stateDir, repo, logFile, JSON.stringify(bounds)];
  if (minFiles > nofile().soft) argv.unshift("prlimit", nofileSpec(minFiles));
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("Bridge fixture exited before listening");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const ready = JSON.parse(text.slice(0, text.indexOf("\n"))) as { socket: string; pid: number };
  return {
    ...ready,
    logFile,
    logs: () =>
      (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    async stop() {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await proc.exited;
      clearTimeout(timer);
      cleanup(root);
    },
  };
}

/** Resident set of a process in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error("no VmRSS");
  return Number(m[1]) * 1024;
}

/** A raw connection that collects reply lines and notices when the server closes it. */
export { LineSocket as Peer, errorCode, frame } from "../support/line-socket.ts";
