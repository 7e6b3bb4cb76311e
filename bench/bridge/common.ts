// Shared bench helpers: machine line, percentiles, a real `serverfs bridge` child process.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import { untilBridgeAnswers } from "../lib/bridge-ready.ts";
import { makeRegistry, makeWorkdir } from "../../test/bridge/helpers.ts";

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  return `machine: ${cpu} × ${os.cpus().length}, ${os.platform()} ${os.release()}, bun ${Bun.version}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
}

export function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function summary(label: string, samplesMs: number[]): string {
  const s = [...samplesMs].sort((a, b) => a - b);
  return `${label}: n=${s.length} p50=${pct(s, 50).toFixed(3)} ms p99=${pct(s, 99).toFixed(3)} ms max=${s[s.length - 1]!.toFixed(3)} ms`;
}

export interface BridgeProc {
  root: string;
  pid: number;
  client: BridgeClient;
  socketPath: string;
  stop(): Promise<void>;
}

/** The command that runs `serverfs`: a compiled binary, or this checkout's source by default. */
export function serverfsCommand(binary: string | undefined): string[] {
  return binary ? [binary] : [process.execPath, path.resolve(import.meta.dir, "../../src/cli.ts")];
}

/** A real Bridge process with `workdirs` fake-enabled workdirs; `binary` picks a compiled serverfs. */
export async function spawnBridge(workdirs: number, agent: Record<string, unknown> = {}, binary?: string): Promise<BridgeProc> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-bench-"));
  const stateDir = path.join(root, "state");
  const aliases = Array.from({ length: workdirs }, (_, i) => `w${i}`);
  let toml = `[server]\nstate_dir = "${stateDir}"\nlog_level = "ERROR"\n`;
  for (const a of aliases) {
    fs.mkdirSync(path.join(root, a));
    toml += `[[workdirs]]\nalias = "${a}"\npath = "${path.join(root, a)}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n`;
  }
  toml += `[agent]\nenabled = true\nenable_fake_runtime = true\n`;
  for (const [k, v] of Object.entries(agent)) toml += `${k} = ${JSON.stringify(v)}\n`;
  const cfg = path.join(root, "serverfs.toml");
  fs.writeFileSync(cfg, toml);
  const registry = makeRegistry(stateDir, aliases.map((a) => makeWorkdir(a, path.join(root, a))));
  const socketPath = bridgePaths(registry).socketPath;
  const proc = Bun.spawn([...serverfsCommand(binary), "bridge", "--config", cfg], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const client = new BridgeClient({ path: socketPath }, 60_000);
  await untilBridgeAnswers(client);
  return {
    root,
    pid: proc.pid,
    client,
    socketPath,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A field of /proc/<pid>/status in kB (NaN when the kernel has no such field). */
function statusKb(status: string, key: string): number {
  return Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
}

/** RSS split into anonymous memory (heaps, buffers) and file pages (the executable's code, mapped from the page cache). */
export function rssSplitMb(pid: number): { anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return { anon: statusKb(status, "RssAnon") / 1024, file: (statusKb(status, "RssFile") + statusKb(status, "RssShmem")) / 1024 };
}

export function rssMb(pid: number): number {
  return statusKb(fs.readFileSync(`/proc/${pid}/status`, "utf8"), "VmRSS") / 1024;
}
