// How long loading + validating examples/serverfs.toml takes. A configuration that passes is
// decided by the build-time compiled check (src/config/schema.generated.ts) and never loads the
// schema; one that is refused loads @ark/schema (arktype's validation core) and the schema module
// to word its problems, so those imports are measured too, split into the import of the core,
// the schema module's own evaluation and the load itself (TOML parse + check + normalizer), and so
// is a whole refused load. The import of the full `arktype` entry point is measured as a
// reference: it is on no load path. Each sample runs in a fresh process; medians of N runs. The
// baseline — a bare `bun -e 0` start, measured in this same run — tells you how much of a cold
// start is Bun itself.
//
//   bun bench/startup/config-load.ts [N=15]
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const N = Number(process.argv[2] ?? 15);
const REPO = path.resolve(import.meta.dir, "../..");
const BUN = process.execPath;
const CONFIG = path.join(REPO, "examples/serverfs.toml");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "config-load-"));
process.on("exit", () => fs.rmSync(TMP, { recursive: true, force: true }));
const REFUSED = path.join(TMP, "refused.toml");
fs.writeFileSync(REFUSED, '[[workdirs]]\nalias = "docs"\npath = "/srv/docs"\nread_only = "yes"\n');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Wall time of a whole child process, in ms. */
function wall(args: string[]): number {
  const t = performance.now();
  const r = spawnSync(BUN, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr.toString()}`);
  return ms;
}

/** A child that prints a JSON object of in-process timings. */
function inner(script: string): Record<string, number> {
  const r = spawnSync(BUN, ["-e", script], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

const arktypeScript = `
const t0 = performance.now();
await import("arktype");
console.log(JSON.stringify({ arktypeFullImport: performance.now() - t0 }));
`;
const splitScript = `
await import("./src/config/ark-jitless.ts"); // as schema.ts does, before the core loads
const t0 = performance.now();
await import("@ark/schema");
const t1 = performance.now();
await import("./src/config/schema.ts");
const t2 = performance.now();
const { loadRegistry } = await import("./src/config/load.ts");
const t3 = performance.now();
await loadRegistry({ configFile: ${JSON.stringify(CONFIG)} });
const t4 = performance.now();
console.log(JSON.stringify({ arkSchemaImport: t1 - t0, schemaEval: t2 - t1, loaderImport: t3 - t2, loadValidate: t4 - t3 }));
`;
const coldScript = `
const t0 = performance.now();
const { loadRegistry } = await import("./src/config/load.ts");
await loadRegistry({ configFile: ${JSON.stringify(CONFIG)} });
console.log(JSON.stringify({ coldLoad: performance.now() - t0 }));
`;
const refusedScript = `
const t0 = performance.now();
const { loadRegistry } = await import("./src/config/load.ts");
const refused = await loadRegistry({ configFile: ${JSON.stringify(REFUSED)} }).then(() => false, () => true);
if (!refused) throw new Error("the refused configuration was accepted");
console.log(JSON.stringify({ refusedLoad: performance.now() - t0 }));
`;
const secondLoadScript = `
const { loadRegistry } = await import("./src/config/load.ts");
await loadRegistry({ configFile: ${JSON.stringify(CONFIG)} });
const t0 = performance.now();
await loadRegistry({ configFile: ${JSON.stringify(CONFIG)} });
console.log(JSON.stringify({ warmLoad: performance.now() - t0 }));
`;

const cols: Record<string, number[]> = {};
const push = (o: Record<string, number>) => {
  for (const [k, v] of Object.entries(o)) (cols[k] ??= []).push(v);
};
wall(["-e", "0"]); // warm the page cache once
for (let i = 0; i < N; i++) {
  push({ baselineProcess: wall(["-e", "0"]) });
  push({ loadProcess: wall(["-e", coldScript]) });
  push(inner(splitScript));
  push(inner(arktypeScript));
  push(inner(coldScript));
  push(inner(refusedScript));
  push(inner(secondLoadScript));
}

const cpu = os.cpus()[0]?.model ?? "unknown";
const uname = spawnSync("uname", ["-a"]).stdout?.toString().trim() ?? `${os.type()} ${os.release()} ${os.arch()}`;
console.log(`machine: ${uname}`);
console.log(`cpu: ${cpu} x${os.cpus().length}`);
console.log(`bun: ${Bun.version}   runs: ${N} (each in a fresh process; medians in ms)`);
console.log("");
const rows: Array<[string, string]> = [
  ["baselineProcess", "whole process: bun -e 0 (baseline)"],
  ["loadProcess", "whole process: load + validate examples/serverfs.toml"],
  ["arkSchemaImport", "  in-process: import @ark/schema (arktype's core)"],
  ["schemaEval", "  in-process: evaluate src/config/schema.ts (@ark/schema already loaded)"],
  ["loaderImport", "  in-process: import load.ts + smol-toml"],
  ["loadValidate", "  in-process: read + parse + check + normalize (schema already loaded)"],
  ["coldLoad", "  in-process: load of a configuration that passes, cold module cache (no schema)"],
  ["refusedLoad", "  in-process: load of a refused configuration, cold module cache (loads the schema)"],
  ["warmLoad", "  in-process: a second load in the same process"],
  ["arktypeFullImport", "  reference, not on the load path: import the full arktype entry point"],
];
for (const [key, label] of rows) {
  const xs = cols[key];
  if (xs) console.log(`${median(xs).toFixed(1).padStart(8)}  ${label}`);
}
