// Cold start of the compiled `serverfs serve` to an answered `initialize` + `tools/list`, against
// the floor of any compiled Bun MCP server: a hello-world program, compiled with `bun build
// --compile` (the same flags as serverfs) in this same run, that reads JSON-RPC lines from stdin
// and answers `initialize` and `tools/list` with the exact bytes serverfs answered them with.
// Target: serve <= 1.3x the hello-world (median of interleaved runs).
//
// Usage: bun build/compile.ts linux-x64 && bun bench/startup/serve-cold.ts [runs]   (default 30; at least 20)
// SERVERFS_BIN=path measures another executable.
//
// One run: spawn, write the three opening frames at once, stop the clock when the tools/list
// answer's newline arrives, read the process's peak RSS (VmHWM) right then, close stdin and wait
// for the exit. The two programs alternate run by run, so both see the same load; the load
// average is printed with the figures.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileArgs } from "../../build/compile.ts";
import { fmtMs, machineLine, median } from "../lib/machine.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const RUNS = Math.max(20, Number(process.argv[2] ?? 30) || 30);

const FRAMES =
  [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
  ]
    .map((f) => JSON.stringify(f))
    .join("\n") + "\n";

interface Run {
  ms: number;
  /** Peak resident set so far, KiB (Linux only). */
  hwmKiB: number | null;
  /** The raw answer lines, by JSON-RPC id. */
  answers: Map<number, string>;
}

function vmHwmKiB(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function once(argv: string[]): Promise<Run> {
  const started = performance.now();
  const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(FRAMES);
  proc.stdin.flush();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  const answers = new Map<number, string>();
  let buffered = "";
  let ms = -1;
  while (ms < 0) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${argv.join(" ")} exited before answering tools/list`);
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const id = (JSON.parse(line) as { id?: number }).id;
      if (typeof id === "number") answers.set(id, line);
      if (id === 2) ms = performance.now() - started;
    }
  }
  const hwmKiB = vmHwmKiB(proc.pid);
  reader.releaseLock();
  proc.stdin.end();
  const exited = await Promise.race([proc.exited, Bun.sleep(5000).then(() => null)]);
  if (exited === null) proc.kill("SIGKILL");
  await proc.exited;
  return { ms, hwmKiB, answers };
}

/** The hello-world's source: the two answers are serverfs's own lines, byte for byte. */
function helloSource(initialize: string, toolsList: string): string {
  return `const ANSWERS = { initialize: ${JSON.stringify(initialize + "\n")}, "tools/list": ${JSON.stringify(toolsList + "\n")} };
let buffered = "";
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\\n")) !== -1) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    const answer = ANSWERS[JSON.parse(line).method];
    if (answer !== undefined) process.stdout.write(answer);
  }
});
process.stdin.on("end", () => process.exit(0));
`;
}

/** serverfs's own compile flags (build/compile.ts), for one entry point on this machine. */
function helloCompileArgs(entry: string, outfile: string): string[] {
  const flags = compileArgs("linux-x64", outfile).filter((a) => a.startsWith("--") && !a.startsWith("--root=") && !a.startsWith("--target="));
  return ["build", entry, ...flags, `--target=bun-${process.platform}-${process.arch}`];
}

function loadLine(): string {
  return `load average: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ")}`;
}

async function main(): Promise<void> {
  const binary = process.env.SERVERFS_BIN ?? path.join(ROOT, "dist", `serverfs-${process.platform}-${process.arch}`);
  if (!fs.existsSync(binary)) throw new Error(`no compiled binary at ${binary}: run bun build/compile.ts linux-x64 first`);
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-serve-cold-")));
  try {
    const tree = path.join(tmp, "tree");
    fs.mkdirSync(path.join(tree, "docs"), { recursive: true });
    fs.writeFileSync(path.join(tree, "README.md"), "hello\n");
    fs.writeFileSync(path.join(tree, "docs", "a.md"), "# a\n");
    const serve = [binary, "serve", "--workdir", `bench=${tree}`];

    // Capture serverfs's answers first (this run also warms the page cache for the executable).
    const captured = await once(serve);
    const initialize = captured.answers.get(1);
    const toolsList = captured.answers.get(2);
    if (initialize === undefined || toolsList === undefined) throw new Error("serve did not answer initialize and tools/list");

    const helloSrc = path.join(tmp, "hello.ts");
    const hello = path.join(tmp, "hello");
    fs.writeFileSync(helloSrc, helloSource(initialize, toolsList));
    const built = spawnSync(process.execPath, helloCompileArgs(helloSrc, hello), { cwd: tmp, stdio: ["ignore", "ignore", "pipe"] });
    if (built.status !== 0) throw new Error(`compiling the hello-world failed: ${built.stderr.toString()}`);
    const warm = await once([hello]);
    if (warm.answers.get(1) !== initialize || warm.answers.get(2) !== toolsList) throw new Error("the hello-world's answers differ from serverfs's");

    const loadBefore = loadLine();
    const ours: Run[] = [];
    const base: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      // Alternate which goes first, so neither always follows the other's exit.
      const pair = i % 2 === 0 ? [serve, [hello]] : [[hello], serve];
      for (const argv of pair) {
        const r = await once(argv);
        if (r.answers.get(2) !== toolsList) throw new Error(`${argv[0]}: tools/list answer changed between runs`);
        (argv === serve ? ours : base).push(r);
      }
    }
    const loadAfter = loadLine();
    const med = (xs: Run[]) => median(xs.map((x) => x.ms));
    const hwm = ours.map((x) => x.hwmKiB).filter((x): x is number => x !== null);
    const ratio = med(ours) / med(base);
    console.log(machineLine());
    console.log(`${loadBefore} (before), ${loadAfter} (after)`);
    console.log(`runs: ${RUNS} each, interleaved; time = spawn -> tools/list answer received (${Buffer.byteLength(toolsList)} bytes, ${(JSON.parse(toolsList) as { result: { tools: unknown[] } }).result.tools.length} tools)`);
    console.log(`hello-world (compiled Bun, same bytes): median ${fmtMs(med(base))}, min ${fmtMs(Math.min(...base.map((x) => x.ms)))}`);
    console.log(`serverfs serve (compiled):              median ${fmtMs(med(ours))}, min ${fmtMs(Math.min(...ours.map((x) => x.ms)))}`);
    if (hwm.length > 0) console.log(`serve peak RSS (VmHWM) at tools/list: median ${(median(hwm) / 1024).toFixed(1)} MiB, max ${(Math.max(...hwm) / 1024).toFixed(1)} MiB`);
    console.log(`ratio serve/hello-world: ${ratio.toFixed(2)}x (target <= 1.3x) ${ratio <= 1.3 ? "MET" : "MISSED"}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
