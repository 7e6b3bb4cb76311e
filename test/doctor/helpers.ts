// Fixtures for the doctor tests: real deployments on disk (TOML config, workdirs, state dir), and
// `serverfs doctor` run as a child process. Processes and temp dirs come from test/support/.
import fs from "node:fs";
import path from "node:path";
import { spawnBridgeProcess, type BridgeProcess } from "../support/bridge-process.ts";
import { runCliAsync } from "../support/proc.ts";
import { tempDir as supportTempDir } from "../support/temp.ts";

export { BUN, CLI, pidAlive, processesWith } from "../support/proc.ts";
export { removeDir as cleanup } from "../support/temp.ts";
export type { BridgeProcess } from "../support/bridge-process.ts";
export const ACP_FIXTURES = path.resolve(import.meta.dir, "../fixtures/acp");

export function tempDir(prefix = "sfs-doctor-"): string {
  return supportTempDir(prefix);
}

export interface Deployment {
  root: string;
  stateDir: string;
  config: string;
  workdirs: Record<string, string>;
  socketPath: string;
  /** TMPDIR handed to every doctor run, so what doctor leaves in its temp dir can be checked. */
  doctorTmp: string;
}

export interface DeploymentOptions {
  /** Extra TOML for the [agent] table (after `enabled = true`). */
  agent?: string;
  /** Extra top-level TOML appended at the end (e.g. [[agent.acp_profiles]] tables). */
  tail?: string;
  agentEnabled?: boolean;
  /** Per-workdir TOML overrides, by alias. */
  workdirToml?: Record<string, string>;
  aliases?: string[];
}

const q = (s: string) => JSON.stringify(s);

export function makeDeployment(opts: DeploymentOptions = {}): Deployment {
  const root = tempDir();
  const stateDir = path.join(root, "state");
  const aliases = opts.aliases ?? ["repo", "docs"];
  const workdirs: Record<string, string> = {};
  let toml = `[server]\nstate_dir = ${q(stateDir)}\n`;
  const agentEnabled = opts.agentEnabled ?? true;
  for (const [i, alias] of aliases.entries()) {
    const dir = path.join(root, alias);
    fs.mkdirSync(dir);
    workdirs[alias] = dir;
    toml += `[[workdirs]]\nalias = ${q(alias)}\npath = ${q(dir)}\n`;
    const custom = opts.workdirToml?.[alias];
    if (custom !== undefined) toml += custom;
    else if (i === 0) {
      toml += agentEnabled ? `read_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` : `read_only = false\n`;
    }
  }
  toml += `[agent]\nenabled = ${agentEnabled}\n`;
  if (agentEnabled) toml += `enable_fake_runtime = true\n`;
  if (opts.agent) toml += opts.agent;
  if (opts.tail) toml += opts.tail;
  const config = path.join(root, "serverfs.toml");
  fs.writeFileSync(config, toml);
  const doctorTmp = path.join(root, "doctor-tmp");
  fs.mkdirSync(doctorTmp, { mode: 0o700 });
  return { root, stateDir, config, workdirs, socketPath: path.join(stateDir, "run", "bridge.sock"), doctorTmp };
}

export interface DoctorRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Text mode: the lines, keyed by label (first occurrence). */
  line(label: string): string;
}

export async function runDoctor(d: Pick<Deployment, "config" | "doctorTmp">, extra: string[] = [], env: Record<string, string> = {}): Promise<DoctorRun> {
  const { code, stdout, stderr } = await runCliAsync(["doctor", "--config", d.config, ...extra], { env: { ...process.env, TMPDIR: d.doctorTmp, ...env } });
  return {
    code,
    stdout,
    stderr,
    line(label: string) {
      const hit = stdout.split("\n").find((l) => l.startsWith(`${label}: `));
      if (hit === undefined) throw new Error(`no '${label}' line in:\n${stdout}`);
      return hit;
    },
  };
}

export function startBridge(d: Deployment, env: Record<string, string> = {}): Promise<BridgeProcess> {
  return spawnBridgeProcess(d.config, d.socketPath, { env: { SERVERFS_FAKE_TURN_LOG: path.join(d.root, "turns.log"), ...env } });
}

/** Every path under `dir` with its type, mode, size and mtime: what "changed nothing" is checked against. */
export function treeSnapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (p: string) => {
    const st = fs.lstatSync(p, { bigint: true });
    out.set(p, `${st.mode}:${st.size}:${st.mtimeNs}:${st.ino}`);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n));
  };
  visit(dir);
  return out;
}
