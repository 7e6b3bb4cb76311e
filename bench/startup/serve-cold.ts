// Cold start of the compiled `serverfs serve` to an answered `initialize` + `tools/list`, against
// the floor of any compiled Bun MCP server: a hello-world program, compiled with `bun build
// --compile` (the same flags as serverfs) in this same run, that reads JSON-RPC lines from stdin
// and answers `initialize` and `tools/list` with the exact bytes serverfs answered them with.
// Target: serve <= 1.3x the hello-world (median of interleaved runs). serve is started as an MCP
// host starts it with workdir flags (`--workdir`) and, in the same interleaved runs, with a
// config file (`--config`, one workdir, the same tools/list): the file is read and parsed, and both
// are checked by the build-time compiled check (src/config/load.ts), so both figures are printed
// and both are in RESULT (`ours_ms`/`ratio` the flags', `config` the file's).
//
// Usage: bun build/compile.ts linux-x64 && bun bench/startup/serve-cold.ts [runs]   (default 30; at least 20)
// SERVERFS_BIN=path measures another executable. SERVERFS_BEFORE_BIN=path adds a third program to
// the same interleaved runs (an earlier build, for before/after figures); its tools/list answer
// must be byte-identical to serve's.
//
// One run: spawn, write the three opening frames at once, stop the clock when the tools/list
// answer's newline arrives, read the process's peak RSS (VmHWM) right then, close stdin and wait
// for the exit. The two programs alternate run by run, so both see the same load; the load
// average is printed with the figures. serve answers its opening before it loads the full server
// (src/mcp/opening.ts), so after the clock stops each serve run also sends a `ping`, which only
// the full server answers, and reads VmHWM again once it is answered: serve's peak with
// everything loaded.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileArgs } from "../../build/compile.ts";
import { fmtMs, machineLine, median } from "../lib/machine.ts";
import { OPENING_FRAMES } from "../lib/opening-frames.ts";
import { vmHwmKiB as readVmHwmKiB } from "../lib/serve-session.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const RUNS = Math.max(20, Number(process.argv[2] ?? 30) || 30);

const FRAMES = OPENING_FRAMES;

interface Run {
  ms: number;
  /** Peak resident set so far, KiB (Linux only). */
  hwmKiB: number | null;
  /** The same once `follow` was answered. */
  loadedHwmKiB: number | null;
  /** The raw answer lines, by JSON-RPC id. */
  answers: Map<number, string>;
}

/** VmHWM, or null where it cannot be read (not Linux, or the process is gone). */
function vmHwmKiB(pid: number): number | null {
  try {
    return readVmHwmKiB(pid);
  } catch {
    return null;
  }
}

const PING = `${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" })}\n`;

/** One run of `argv`; with `follow`, a ping is sent after the clock stopped and its answer awaited. */
async function once(argv: string[], follow = false): Promise<Run> {
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
  let loadedHwmKiB: number | null = null;
  if (follow) {
    proc.stdin.write(PING);
    proc.stdin.flush();
    while (!answers.has(3)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${argv.join(" ")} exited before answering ping`);
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        const id = (JSON.parse(buffered.slice(0, nl)) as { id?: number }).id;
        if (typeof id === "number") answers.set(id, buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    }
    loadedHwmKiB = vmHwmKiB(proc.pid);
  }
  reader.releaseLock();
  proc.stdin.end();
  const exited = await Promise.race([proc.exited, Bun.sleep(5000).then(() => null)]);
  if (exited === null) proc.kill("SIGKILL");
  await proc.exited;
  return { ms, hwmKiB, loadedHwmKiB, answers };
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
    const toml = path.join(tmp, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "bench"\npath = ${JSON.stringify(tree)}\nread_only = true\n`);
    const serveConfig = [binary, "serve", "--config", toml];

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

    const beforeBin = process.env.SERVERFS_BEFORE_BIN;
    const before = beforeBin === undefined ? undefined : [beforeBin, "serve", "--workdir", `bench=${tree}`];
    const configured = await once(serveConfig);
    if (configured.answers.get(2) !== toolsList) throw new Error("serve --config answered another tools/list than serve --workdir");
    if (before) await once(before);
    const loadBefore = loadLine();
    const series = new Map<string[], Run[]>([
      [serve, []],
      [[hello], []],
      [serveConfig, []],
    ]);
    if (before) series.set(before, []);
    const programs = [...series.keys()];
    for (let i = 0; i < RUNS; i++) {
      // Rotate which goes first, so none always follows the same one's exit.
      for (let j = 0; j < programs.length; j++) {
        const argv = programs[(i + j) % programs.length]!;
        const r = await once(argv, argv !== programs[1]);
        if (r.answers.get(2) !== toolsList) throw new Error(`${argv[0]}: its tools/list answer is not serve's`);
        series.get(argv)!.push(r);
      }
    }
    const ours = series.get(serve)!;
    const base = series.get(programs[1]!)!;
    const loadAfter = loadLine();
    const med = (xs: Run[]) => median(xs.map((x) => x.ms));
    const fromFile = series.get(serveConfig)!;
    const serves = [...ours, ...fromFile];
    const hwm = serves.map((x) => x.hwmKiB).filter((x): x is number => x !== null);
    const loadedHwm = serves.map((x) => x.loadedHwmKiB).filter((x): x is number => x !== null);
    const mib = (kib: number) => (kib / 1024).toFixed(1);
    const ratio = med(ours) / med(base);
    console.log(machineLine());
    console.log(`${loadBefore} (before), ${loadAfter} (after)`);
    console.log(`runs: ${RUNS} each, interleaved; time = spawn -> tools/list answer received (${Buffer.byteLength(toolsList)} bytes, ${(JSON.parse(toolsList) as { result: { tools: unknown[] } }).result.tools.length} tools)`);
    console.log(`hello-world (compiled Bun, same bytes): median ${fmtMs(med(base))}, min ${fmtMs(Math.min(...base.map((x) => x.ms)))}`);
    console.log(`serverfs serve --workdir (compiled):    median ${fmtMs(med(ours))}, min ${fmtMs(Math.min(...ours.map((x) => x.ms)))}`);
    const configRatio = med(fromFile) / med(base);
    console.log(`serverfs serve --config (compiled):     median ${fmtMs(med(fromFile))}, min ${fmtMs(Math.min(...fromFile.map((x) => x.ms)))}, ratio ${configRatio.toFixed(2)}x (target <= 1.3x) ${configRatio <= 1.3 ? "MET" : "MISSED"}`);
    if (hwm.length > 0) console.log(`serve peak RSS (VmHWM) at tools/list: median ${mib(median(hwm))} MiB, max ${mib(Math.max(...hwm))} MiB`);
    if (loadedHwm.length > 0) console.log(`serve peak RSS (VmHWM) once the full server answered a ping: median ${mib(median(loadedHwm))} MiB, max ${mib(Math.max(...loadedHwm))} MiB`);
    if (before) {
      const earlier = series.get(before)!;
      console.log(`before (${beforeBin}): median ${fmtMs(med(earlier))}, min ${fmtMs(Math.min(...earlier.map((x) => x.ms)))}, ratio ${(med(earlier) / med(base)).toFixed(2)}x; VmHWM at tools/list median ${mib(median(earlier.map((x) => x.hwmKiB ?? NaN)))} MiB, after a ping ${mib(median(earlier.map((x) => x.loadedHwmKiB ?? NaN)))} MiB`);
    }
    console.log(`ratio serve --workdir/hello-world: ${ratio.toFixed(2)}x (target <= 1.3x) ${ratio <= 1.3 ? "MET" : "MISSED"}`);
    // for bench/targets.ts (row 8): the contract at the top of that file
    const peak = [...hwm, ...loadedHwm];
    console.log(`RESULT ${JSON.stringify({ bench: "serve-cold", runs: RUNS, ours_ms: med(ours), baseline_ms: med(base), ratio, config: { ours_ms: med(fromFile), baseline_ms: med(base), ratio: configRatio }, ...(peak.length > 0 ? { peak_rss_kib: Math.max(...peak) } : {}) })}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
