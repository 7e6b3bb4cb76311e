// `npm run interop [agent ...]`: installs each agent at its pinned version (outside the repo),
// points it at a scripted model on 127.0.0.1 through operator settings, runs the five scenarios
// through MCP client → serverfs serve → serverfs bridge → agent, prints the matrix, stores it and
// regenerates docs/acp-profiles.md's evidence table. Exit 1 names every failing cell. Run by
// wine.ts as a Windows process (`npm run interop:wine`), the same suite drives the agents' Windows
// builds and the Windows serverfs executable under Wine (host.ts holds what differs).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { machineLine } from "../bench/lib/machine.ts";
import { AGENTS } from "./agents/index.ts";
import type { AgentSpec } from "./agents/types.ts";
import { Chain } from "./chain.ts";
import { LANE, WINDOWS, newWatch, osLabel, removeBase, scanSelfCheck, serverfsExe } from "./host.ts";
import { waitGone } from "./procscan.ts";
import { ensureInstalled, installDir, packedDir } from "./install.ts";
import { failures, markdown, merge, updateDoc, writeResults, type AgentResult } from "./report.ts";
import { runScenario, SCENARIOS, type Scenario } from "./scenarios.ts";

const REPO = path.resolve(import.meta.dir, "..");
const log = (s: string) => console.error(`[interop] ${s}`);

async function serverfsBinary(): Promise<string> {
  const bin = serverfsExe();
  if (fs.existsSync(bin)) return bin;
  if (WINDOWS) throw new Error(`${bin} is missing (wine.ts builds it)`);
  log("building dist/serverfs-linux-x64");
  const p = Bun.spawn([process.execPath, path.join(REPO, "build/compile.ts"), "linux-x64"], { cwd: REPO, stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0 || !fs.existsSync(bin)) throw new Error("build/compile.ts linux-x64 failed");
  return bin;
}

function toml(v: unknown): string {
  return JSON.stringify(v);
}

function writeConfig(base: string, spec: AgentSpec, command: string, runtime: string, workdir: string, envFile: string, argsBefore: string[] = []): string {
  const lines = [
    "[server]",
    `state_dir = ${toml(path.join(base, "state"))}`,
    "[[workdirs]]",
    'alias = "app"',
    `path = ${toml(workdir)}`,
    "read_only = false",
    'agent_mode = "workspace-write"',
    `agent_runtimes = [${toml(runtime)}]`,
    "[agent]",
    "enabled = true",
    'approvals = "tools"',
    "event_idle_timeout_seconds = 150",
    `provider_env_file = ${toml(envFile)}`,
  ];
  const r = spec.runtime;
  if (r.kind === "acp") {
    lines.push("[[agent.acp_profiles]]", `id = ${toml(r.id)}`, `command = ${toml(command)}`, `args = ${toml([...argsBefore, ...r.args])}`, "use_proxy = false");
    if (r.tmpdir_env) lines.push(`tmpdir_env = ${toml(r.tmpdir_env)}`);
    if (r.probe_timeout_seconds) lines.push(`probe_timeout_seconds = ${r.probe_timeout_seconds}`);
    if (r.shutdown_timeout_seconds) lines.push(`shutdown_timeout_seconds = ${r.shutdown_timeout_seconds}`);
  } else {
    lines.push(`[agent.${r.kind}]`, "enabled = true", `bin = ${toml(command)}`, "use_proxy = false");
  }
  const file = path.join(base, "serverfs.toml");
  fs.writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

async function runAgent(spec: AgentSpec, bin: string, only: readonly Scenario[]): Promise<AgentResult> {
  const runtime = spec.runtime.kind === "acp" ? `acp-${spec.runtime.id}` : spec.runtime.kind;
  const win = WINDOWS ? spec.windows : undefined;
  const own = !win || win.script !== undefined;
  const result: AgentResult = { agent: spec.name, pkg: own ? spec.pkg : win.pkg, version: !win ? spec.version : win.script ? `${spec.version} on ${win.pkg}@${win.version}` : win.version, runtime, date: new Date().toISOString().slice(0, 10), os: osLabel(), cells: {} };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-interop-"));
  const marker = crypto.randomUUID();
  const home = path.join(base, "home");
  const workdir = path.join(base, "app");
  fs.mkdirSync(home);
  fs.mkdirSync(workdir);
  const model = spec.startModel();
  let chain: Chain | null = null;
  const watch = newWatch(marker, () => chain?.bridgePid() ?? null);
  try {
    // Under Wine no npm runs: wine.ts unpacked the Windows package before starting this driver.
    const dir = win && !win.script ? packedDir(win.pkg, win.version) : spec.source === "cache" ? (WINDOWS ? installDir(spec.pkg, spec.version) : await ensureInstalled(spec.pkg, spec.version, log)) : REPO;
    const command = win ? path.join(packedDir(win.pkg, win.version), "package", win.exe) : spec.command(dir);
    const argsBefore = win?.script ? [win.script(dir)] : [];
    if (!fs.existsSync(command)) throw new Error(`${command} is not installed`);
    const env = { ...spec.configure({ home, marker, workdir }, model.baseUrl), ...win?.env };
    const envFile = path.join(base, "provider.env");
    fs.writeFileSync(envFile, `${Object.entries(env).map(([k, v]) => `${k}=${v}`).join("\n")}\n`, { mode: 0o600 });
    chain = new Chain(bin, base, writeConfig(base, spec, command, runtime, workdir, envFile, argsBefore), runtime, home);
    await chain.startBridge();
    await chain.connect();
    result.cells.setup = { result: "PASS", detail: `profile ${runtime} → ${win ? `${win.pkg}@${win.version} ${win.exe}${argsBefore.length ? ` ${path.relative(dir, argsBefore[0]!)}` : ""}` : path.relative(dir, command)}${win?.note ? ` (${win.note})` : ""}` };
  } catch (e) {
    result.cells.setup = { result: "FAIL", detail: e instanceof Error ? e.message : String(e) };
  }
  try {
    if (chain && result.cells.setup?.result === "PASS") {
      for (const s of only) {
        log(`${spec.name} × ${s} …`);
        const started = Date.now();
        const cell = await runScenario(s, { chain, model, watch, workdir, continuationNeedsNewMinute: spec.continuationNeedsNewMinute === true && process.env.INTEROP_NO_WORKAROUNDS !== "1" });
        const limit = win?.wineLimits?.[s];
        if (cell.result === "FAIL" && limit) cell.detail = `Wine cannot model this: ${limit}. Observed: ${cell.detail}`;
        result.cells[s] = cell;
        log(`${spec.name} × ${s}: ${cell.result} (${((Date.now() - started) / 1000).toFixed(1)} s) ${cell.detail}`);
      }
    }
  } finally {
    await chain?.close();
    model.stop();
    const left = await waitGone(watch, 10_000);
    if (left.length > 0) log(`${spec.name}: ${left.length} process(es) left after the run: ${left.map((p) => `${p.pid} ${p.cmd}`).join("; ")}`);
    if (process.env.INTEROP_KEEP === "1") fs.writeFileSync(path.join(base, "model-requests.jsonl"), model.requests.map((r) => r.raw).join("\n"));
    if (process.env.INTEROP_KEEP !== "1") removeBase(base);
    else log(`kept ${base}`);
  }
  return result;
}

async function main(): Promise<number> {
  if (!(process.platform === "linux" || WINDOWS) || process.arch !== "x64") {
    log("the interop matrix runs on Linux x64, or as a Windows x64 process under Wine (npm run interop:wine)");
    return 1;
  }
  const args = process.argv.slice(2);
  const scen = (process.env.INTEROP_SCENARIOS?.split(",").filter((s) => (SCENARIOS as readonly string[]).includes(s)) as Scenario[] | undefined) ?? [...SCENARIOS];
  const unknown = args.filter((a) => !AGENTS.some((s) => s.name === a));
  if (unknown.length > 0) {
    log(`unknown agent(s): ${unknown.join(", ")}; known: ${AGENTS.map((a) => a.name).join(", ")}`);
    return 2;
  }
  const eligible = WINDOWS ? AGENTS.filter((a) => a.windows) : AGENTS;
  const noWin = args.filter((a) => !eligible.some((s) => s.name === a));
  if (noWin.length > 0) {
    log(`no Windows executable on npm for: ${noWin.join(", ")}; under Wine: ${eligible.map((a) => a.name).join(", ")}`);
    return 2;
  }
  const chosen = args.length > 0 ? eligible.filter((a) => args.includes(a.name)) : eligible;
  await scanSelfCheck();
  const bin = await serverfsBinary();
  const agents: AgentResult[] = [];
  for (const spec of chosen) agents.push(await runAgent(spec, bin, scen));
  const run = { machine: WINDOWS ? `${machineLine()} (${osLabel()})` : machineLine(), command: `npm run ${LANE === "wine" ? "interop:wine" : "interop"}${args.length ? ` ${args.join(" ")}` : ""}`, agents };
  console.log(markdown(run));
  const all = merge(run, LANE);
  writeResults(all, LANE);
  updateDoc(all, LANE);
  const failed = failures(run);
  if (failed.length > 0) {
    console.log(`FAILED cells (${failed.length}):\n${failed.map((f) => `  ${f}`).join("\n")}`);
    return 1;
  }
  return 0;
}

process.exit(await main());
