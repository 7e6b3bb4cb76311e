// Compiles serverfs into one self-contained executable per target, into dist/ (or --out DIR), and
// writes SHA256SUMS there. Usage: bun build/compile.ts [--out DIR] [target ...]   (default: all five)
//
// The flags are not negotiable (docs/maintainers/build.md): without --no-compile-autoload-dotenv and
// --no-compile-autoload-bunfig a compiled binary would read .env and bunfig.toml from whatever
// directory it was started in; --bytecode needs --format=esm for the top-level await in cli.ts.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { STARTUP_JIT_POLICY } from "../platform/jit-policy.ts";

export const TARGETS = {
  "linux-x64": { bunTarget: "bun-linux-x64", exe: "serverfs-linux-x64" },
  "linux-arm64": { bunTarget: "bun-linux-arm64", exe: "serverfs-linux-arm64" },
  "darwin-arm64": { bunTarget: "bun-darwin-arm64", exe: "serverfs-darwin-arm64" },
  "darwin-x64": { bunTarget: "bun-darwin-x64", exe: "serverfs-darwin-x64" },
  "windows-x64": { bunTarget: "bun-windows-x64", exe: "serverfs-windows-x64.exe" },
} as const;
export type TargetName = keyof typeof TARGETS;

const ROOT = resolve(import.meta.dir, "..");
const DIST = join(ROOT, "dist");

export function isTarget(name: string): name is TargetName {
  return Object.hasOwn(TARGETS, name);
}

export function compileArgs(target: TargetName, outfile: string): string[] {
  return [
    "build",
    join(ROOT, "src/cli.ts"),
    // a second entry point: Workers of a compiled executable can only load what was embedded
    // (src/fs/search/search-pool.ts starts it; it must never come from the disk at run time)
    join(ROOT, "src/fs/search/search-worker.ts"),
    // the I/O thread of the Bridge's named pipes (platform/windows/pipe-stream.ts starts it)
    join(ROOT, "platform/windows/pipe-io-worker.ts"),
    // the macOS fork watcher's thread (platform/darwin/fork-watch.ts starts it)
    join(ROOT, "platform/darwin/fork-watch-worker.ts"),
    // every entry keeps its path from the repository root (platform/embedded-worker.ts)
    `--root=${ROOT}`,
    "--compile",
    "--splitting",
    "--minify",
    "--bytecode",
    // start-up code stays out of the optimizing JIT; the threads that need it switch back (platform/jit-policy.ts)
    `--compile-jit-policy=${STARTUP_JIT_POLICY}`,
    "--format=esm",
    "--sourcemap",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--target=${TARGETS[target].bunTarget}`,
    `--outfile=${outfile}`,
  ];
}

/** Compiles one target into `outDir`. The file name matters: Bun puts it into the darwin signature. */
export async function compile(target: TargetName, outDir: string = DIST): Promise<string> {
  const outfile = join(outDir, TARGETS[target].exe);
  const proc = Bun.spawn([process.execPath, ...compileArgs(target, outfile)], {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
    env: withoutBunOverrides(process.env),
  });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`bun build failed for ${target} (exit ${code})`);
  return outfile;
}

/** A build must not be steered by the builder's own BUN_OPTIONS/BUN_BE_BUN/feature flags. */
function withoutBunOverrides(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k === "BUN_OPTIONS" || k === "BUN_BE_BUN" || k.startsWith("BUN_FEATURE_FLAG_")) continue;
    out[k] = v;
  }
  return out;
}

/** `sha256sum` format (two spaces, then the name), sorted by name, one line per file. */
export function checksumLines(dir: string, names: readonly string[]): string {
  return [...names]
    .sort()
    .map((n) => `${createHash("sha256").update(readFileSync(join(dir, n))).digest("hex")}  ${n}\n`)
    .join("");
}

function writeChecksums(dir: string): void {
  const names = readdirSync(dir).filter((n) => n.startsWith("serverfs-") && !n.endsWith(".map"));
  writeFileSync(join(dir, "SHA256SUMS"), checksumLines(dir, names));
}

/**
 * What is computed here, not at every start: the file tools' JSON Schemas (src/mcp/tools/fs/schemas.ts)
 * and the compiled configuration check (src/config/schema.generated.ts).
 */
export function generateBuildTimeModules(): void {
  for (const script of ["build/tool-schemas.ts", "build/config-check.ts"]) {
    const gen = Bun.spawnSync([process.execPath, join(ROOT, script)], { cwd: ROOT, stdout: "inherit", stderr: "inherit", env: withoutBunOverrides(process.env) });
    if (gen.exitCode !== 0) throw new Error(`${script} failed (exit ${gen.exitCode})`);
  }
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const outAt = argv.indexOf("--out");
  const outDir = outAt === -1 ? DIST : resolve(argv[outAt + 1] ?? "");
  if (outAt !== -1 && argv[outAt + 1] === undefined) {
    process.stderr.write("build: --out needs a directory\n");
    process.exit(2);
  }
  const requested = outAt === -1 ? argv : argv.filter((_, i) => i !== outAt && i !== outAt + 1);
  const unknown = requested.filter((t) => !isTarget(t));
  if (unknown.length > 0) {
    process.stderr.write(`build: unknown target(s) ${unknown.join(", ")}; known: ${Object.keys(TARGETS).join(", ")}\n`);
    process.exit(2);
  }
  const targets = (requested.length > 0 ? requested : Object.keys(TARGETS)) as TargetName[];
  mkdirSync(outDir, { recursive: true });
  generateBuildTimeModules();
  for (const t of targets) {
    const started = performance.now();
    const out = await compile(t, outDir);
    process.stderr.write(`build: ${t} -> ${out} (${Math.round(performance.now() - started)} ms)\n`);
  }
  writeChecksums(outDir);
  process.stderr.write(`build: wrote ${join(outDir, "SHA256SUMS")}\n`);
}
