// Cold start of `serverfs serve` (compiled binary) to an answered `initialize` + `tools/list`,
// against @modelcontextprotocol/server-filesystem on Node, in the same run on the same tree; and
// serve's 2026-07-28 opening (`server/discover` + an enveloped `tools/list`), which the reference
// does not speak.
// Usage: bun build/compile.ts linux-x64 && bun bench/fs/startup.ts [runs]   (default 15; at least 10)
// SERVERFS_BIN=path measures another executable.
//
// The reference server is installed into a temp prefix at bench time and never added to
// package.json. Each run spawns a fresh process, writes the three frames at once, and stops the
// clock when the tools/list response arrives; RSS is read right after, then stdin is closed and
// the exit awaited.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fmtMs, machineLine, median } from "../lib/machine.ts";
import { OPENING_FRAMES } from "../lib/opening-frames.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const RUNS = Math.max(10, Number(process.argv[2] ?? 15) || 15);

interface Sample {
  ms: number;
  rssKiB: number | null;
  tools: number;
}

const FRAMES = OPENING_FRAMES;

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const MODERN_FRAMES =
  [
    { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: ENVELOPE } },
  ]
    .map((f) => JSON.stringify(f))
    .join("\n") + "\n";

function rssKiB(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    if (m) return Number(m[1]);
  } catch {
    // not Linux: fall back to ps below
  }
  const ps = spawnSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" });
  const n = Number(ps.stdout.trim());
  return Number.isFinite(n) && n > 0 ? n : null;
}

async function once(argv: string[], frames = FRAMES): Promise<Sample> {
  const started = performance.now();
  const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(frames);
  proc.stdin.flush();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let tools = -1;
  let ms = 0;
  while (tools < 0) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${argv[0]} exited before answering tools/list`);
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const msg = JSON.parse(line) as { id?: number; result?: { tools?: unknown[] } };
      if (msg.id === 2) {
        ms = performance.now() - started;
        tools = msg.result?.tools?.length ?? 0;
      }
    }
  }
  const rss = rssKiB(proc.pid);
  reader.releaseLock();
  proc.stdin.end();
  const exited = await Promise.race([proc.exited, Bun.sleep(5000).then(() => null)]);
  if (exited === null) proc.kill("SIGKILL");
  await proc.exited;
  return { ms, rssKiB: rss, tools };
}

function run(cmd: string[], cwd: string, what: string): void {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status})`);
}

async function main(): Promise<void> {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-startup-")));
  try {
    const tree = path.join(tmp, "tree");
    fs.mkdirSync(path.join(tree, "docs"), { recursive: true });
    fs.writeFileSync(path.join(tree, "README.md"), "hello\n");
    fs.writeFileSync(path.join(tree, "docs", "a.md"), "# a\n");

    // The executable users run: build/compile.ts's, with the search worker's entry point embedded
    // (a binary built here from src/cli.ts alone lacked it, and serve's start of that worker failed).
    const binary = process.env.SERVERFS_BIN ?? path.join(ROOT, "dist", `serverfs-${process.platform}-${process.arch}`);
    if (!fs.existsSync(binary)) throw new Error(`no compiled binary at ${binary}: run bun build/compile.ts linux-x64 first`);

    const prefix = path.join(tmp, "node-ref");
    console.log("installing @modelcontextprotocol/server-filesystem into a temp prefix ...");
    run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "@modelcontextprotocol/server-filesystem"], tmp, "npm install");
    const refPkg = path.join(prefix, "node_modules/@modelcontextprotocol/server-filesystem");
    const refVersion = (JSON.parse(fs.readFileSync(path.join(refPkg, "package.json"), "utf8")) as { version: string }).version;
    const refEntry = path.join(refPkg, "dist/index.js");
    const nodeVersion = spawnSync("node", ["--version"], { encoding: "utf8" }).stdout.trim();

    const ours = [binary, "serve", "--workdir", `bench=${tree}`];
    const oursRw = [binary, "serve", "--workdir", `bench=${tree}:rw`];
    const ref = ["node", refEntry, tree];

    // One warm-up each so the page cache holds both executables: "cold" means a new process,
    // not a cold disk.
    await once(ours);
    await once(ref);
    const a: Sample[] = [];
    const b: Sample[] = [];
    const c: Sample[] = [];
    const d: Sample[] = [];
    for (let i = 0; i < RUNS; i++) {
      a.push(await once(ours));
      c.push(await once(oursRw));
      d.push(await once(ours, MODERN_FRAMES));
      b.push(await once(ref));
    }
    const med = (xs: Sample[]) => median(xs.map((x) => x.ms));
    const medRss = (xs: Sample[]) => median(xs.map((x) => x.rssKiB ?? NaN)) / 1024;
    const ratio = med(a) / med(b);
    console.log(machineLine());
    console.log(`runs: ${RUNS} each, interleaved; time = spawn -> tools/list answered`);
    console.log(
      `serverfs (compiled, read-only, ${a[0]!.tools} tools): median ${fmtMs(med(a))}, RSS ${medRss(a).toFixed(1)} MiB`,
    );
    console.log(
      `serverfs (compiled, read-write, ${c[0]!.tools} tools): median ${fmtMs(med(c))}, RSS ${medRss(c).toFixed(1)} MiB`,
    );
    console.log(
      `serverfs (compiled, read-only, 2026-07-28 opening: server/discover + tools/list): median ${fmtMs(med(d))}, RSS ${medRss(d).toFixed(1)} MiB`,
    );
    console.log(
      `server-filesystem ${refVersion} on node ${nodeVersion} (${b[0]!.tools} tools): median ${fmtMs(med(b))}, RSS ${medRss(b).toFixed(1)} MiB`,
    );
    console.log(`ratio serverfs/reference: ${ratio.toFixed(2)}x (target <= 0.25x) ${ratio <= 0.25 ? "OK" : "MISSED"}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
