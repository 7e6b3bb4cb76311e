// How long `serverfs doctor` takes on a healthy deployment: a real `serverfs bridge` started
// here, two workdirs (one read-write with 200 files, one read-only), the Agent Bridge enabled,
// no --probe-acp. Each sample is a whole CLI process; the baseline is `serverfs --version`
// (Bun start + CLI dispatch) measured in the same run. Target: doctor under 1 s.
//
//   bun bench/doctor/healthy.ts [N=10]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { fmtMs, machineLine, median, percentile } from "../lib/machine.ts";
import { untilBridgeAnswers } from "../lib/bridge-ready.ts";

const N = Number(process.argv[2] ?? 10);
const BUN = process.execPath;
const CLI = path.resolve(import.meta.dir, "../../src/cli.ts");

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-doctor-bench-")));
const stateDir = path.join(root, "state");
const repo = path.join(root, "repo");
const docs = path.join(root, "docs");
fs.mkdirSync(repo);
fs.mkdirSync(docs);
for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(repo, `f${i}.txt`), `file ${i}\n`);
const config = path.join(root, "serverfs.toml");
fs.writeFileSync(
  config,
  [
    "[server]",
    `state_dir = ${JSON.stringify(stateDir)}`,
    "[[workdirs]]",
    'alias = "repo"',
    `path = ${JSON.stringify(repo)}`,
    "read_only = false",
    'agent_mode = "workspace-write"',
    'agent_runtimes = ["fake"]',
    "[[workdirs]]",
    'alias = "docs"',
    `path = ${JSON.stringify(docs)}`,
    "[agent]",
    "enabled = true",
    "enable_fake_runtime = true",
    "",
  ].join("\n"),
);

async function wall(args: string[], expectCode: number): Promise<number> {
  const t = performance.now();
  const p = Bun.spawn([BUN, CLI, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, , code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const ms = performance.now() - t;
  if (code !== expectCode) throw new Error(`serverfs ${args.join(" ")} exited ${code}:\n${out}`);
  return ms;
}

const bridge = Bun.spawn([BUN, CLI, "bridge", "--config", config], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
try {
  const client = new BridgeClient({ path: path.join(stateDir, "run", "bridge.sock") }, 5000);
  await untilBridgeAnswers(client);
  await wall(["doctor", "--config", config], 0); // warm the file cache once
  const version: number[] = [];
  const doctor: number[] = [];
  for (let i = 0; i < N; i++) {
    version.push(await wall(["--version"], 0));
    doctor.push(await wall(["doctor", "--config", config], 0));
  }
  const sorted = [...doctor].sort((a, b) => a - b);
  console.log(machineLine());
  console.log(`runs: ${N} each, interleaved`);
  console.log(`baseline serverfs --version   median ${fmtMs(median(version))}`);
  console.log(`serverfs doctor (healthy)     median ${fmtMs(median(doctor))}  p90 ${fmtMs(percentile(sorted, 90))}  max ${fmtMs(sorted.at(-1)!)}`);
  console.log(`doctor minus baseline         median ${fmtMs(median(doctor) - median(version))}`);
  console.log(`target < 1000 ms: ${median(doctor) < 1000 ? "met" : "NOT met"}`);
} finally {
  bridge.kill("SIGTERM");
  await bridge.exited;
  fs.rmSync(root, { recursive: true, force: true });
}
