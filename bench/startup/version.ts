// `serverfs --version` start-up, compiled exactly as shipped, against a hello-world Bun binary
// compiled with the same flags in the same run. Target (issue [1/7]): under 20 ms.
// Usage: bun bench/startup/version.ts [runs]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compileArgs } from "../../build/compile.ts";
import { fmtMs, machineLine, median, percentile } from "../lib/machine.ts";

const runs = Number(process.argv[2] ?? 30);
const dir = mkdtempSync(join(tmpdir(), "serverfs-bench-startup-"));
try {
  const serverfs = join(dir, "serverfs");
  const hello = join(dir, "hello");
  const helloSrc = join(dir, "hello.ts");
  writeFileSync(helloSrc, 'process.stdout.write("hello\\n");\n');
  build(compileArgs("linux-x64", serverfs).map((a) => (a.startsWith("--target=") ? `--target=bun-${process.platform}-${process.arch}` : a)));
  const helloArgs = compileArgs("linux-x64", hello)
    .map((a) => (a.endsWith("src/cli.ts") ? helloSrc : a))
    .map((a) => (a.startsWith("--target=") ? `--target=bun-${process.platform}-${process.arch}` : a));
  build(helloArgs);

  const s = time([serverfs, "--version"], runs);
  const h = time([hello], runs);
  console.log(machineLine());
  console.log(`runs: ${runs} each, after one warm-up run (page cache warm)`);
  console.log(`baseline hello-world binary: median ${fmtMs(median(h))}, p95 ${fmtMs(percentile([...h].sort((a, b) => a - b), 95))}`);
  console.log(`serverfs --version:          median ${fmtMs(median(s))}, p95 ${fmtMs(percentile([...s].sort((a, b) => a - b), 95))}`);
  console.log(`ratio serverfs/hello: ${(median(s) / median(h)).toFixed(2)}x   target: serverfs --version < 20 ms -> ${median(s) < 20 ? "MET" : "NOT MET"}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function build(args: string[]): void {
  const p = Bun.spawnSync([process.execPath, ...args], { cwd: resolve(import.meta.dir, "../.."), stdout: "ignore", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`build failed: ${p.stderr.toString()}`);
}

function time(argv: string[], n: number): number[] {
  const out: number[] = [];
  Bun.spawnSync(argv, { stdout: "ignore" }); // warm the page cache once
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
    out.push(performance.now() - t0);
    if (p.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${p.exitCode}`);
  }
  return out;
}
