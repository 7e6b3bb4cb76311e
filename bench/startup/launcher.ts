// What the npm package's Node launcher adds to a start: `node build/npm/launcher.cjs --version`
// (resolving the platform package and starting its executable) against the executable alone,
// interleaved in the same run. Target: under 50 ms added (median).
// Usage: bun bench/startup/launcher.ts [runs]   (uses dist/serverfs-<this platform>; build it first)
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fmtMs, machineLine, median, percentile } from "../lib/machine.ts";

const runs = Number(process.argv[2] ?? 30);
const ROOT = resolve(import.meta.dir, "../..");
const target = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
const exeName = process.platform === "win32" ? "serverfs.exe" : "serverfs";
const built = join(ROOT, "dist", `serverfs-${target}${process.platform === "win32" ? ".exe" : ""}`);
if (!existsSync(built)) throw new Error(`${built} is missing: run bun build/compile.ts ${target}`);
const node = Bun.which("node");
if (node === null) throw new Error("node is not on PATH");

// The installed layout npm produces: node_modules/serverfs/bin/serverfs.js beside node_modules/serverfs-<target>/.
const dir = mkdtempSync(join(tmpdir(), "serverfs-bench-launcher-"));
try {
  const main = join(dir, "node_modules/serverfs/bin");
  const platform = join(dir, `node_modules/serverfs-${target}`);
  mkdirSync(main, { recursive: true });
  mkdirSync(join(platform, "bin"), { recursive: true });
  copyFileSync(join(ROOT, "build/npm/launcher.cjs"), join(main, "serverfs.js"));
  writeFileSync(join(platform, "package.json"), JSON.stringify({ name: `serverfs-${target}`, version: "0.0.0" }));
  const exe = join(platform, "bin", exeName);
  copyFileSync(built, exe);
  chmodSync(exe, 0o755);

  const direct: number[] = [];
  const launched: number[] = [];
  // Node starting and exiting with nothing to do: the floor any Node launcher stands on.
  const bareNode: number[] = [];
  once([exe, "--version"]);
  once([node, join(main, "serverfs.js"), "--version"]);
  once([node, "-e", ""]);
  for (let i = 0; i < runs; i++) {
    direct.push(once([exe, "--version"]));
    launched.push(once([node, join(main, "serverfs.js"), "--version"]));
    bareNode.push(once([node, "-e", ""]));
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const added = median(launched) - median(direct);
  console.log(machineLine());
  console.log(`node ${Bun.spawnSync([node, "--version"]).stdout.toString().trim()}; runs: ${runs} each, interleaved, after one warm-up run each`);
  console.log(`executable alone (baseline): median ${fmtMs(median(direct))}, p95 ${fmtMs(percentile(sorted(direct), 95))}`);
  console.log(`through the launcher:        median ${fmtMs(median(launched))}, p95 ${fmtMs(percentile(sorted(launched), 95))}`);
  console.log(`node -e '' alone:             median ${fmtMs(median(bareNode))}, p95 ${fmtMs(percentile(sorted(bareNode), 95))}`);
  console.log(`launcher adds: ${fmtMs(added)}   target: < 50 ms -> ${added < 50 ? "MET" : "NOT MET"}`);
  console.log(`of which Node's own start (node -e ''): ${fmtMs(median(bareNode))}; the launcher's own work: ${fmtMs(added - median(bareNode))}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function once(argv: string[]): number {
  const t0 = performance.now();
  const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t0;
  if (p.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${p.exitCode}: ${p.stderr.toString()}`);
  return ms;
}
