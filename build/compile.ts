// Compiles serverfs into one self-contained executable per target, into dist/, and writes
// dist/SHA256SUMS. Usage: bun build/compile.ts [target ...]   (default: all five targets)
//
// The flags are not negotiable (docs/maintainers/build.md): without --no-compile-autoload-dotenv and
// --no-compile-autoload-bunfig a compiled binary would read .env and bunfig.toml from whatever
// directory it was started in; --bytecode needs --format=esm for the top-level await in cli.ts.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

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

function isTarget(name: string): name is TargetName {
  return Object.hasOwn(TARGETS, name);
}

export function compileArgs(target: TargetName, outfile: string): string[] {
  return [
    "build",
    join(ROOT, "src/cli.ts"),
    // a second entry point: Workers of a compiled executable can only load what was embedded
    // (src/fs/search/search-pool.ts starts it; it must never come from the disk at run time)
    join(ROOT, "src/fs/search/search-worker.ts"),
    "--compile",
    "--minify",
    "--bytecode",
    "--format=esm",
    "--sourcemap",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--target=${TARGETS[target].bunTarget}`,
    `--outfile=${outfile}`,
  ];
}

async function compile(target: TargetName): Promise<string> {
  const outfile = join(DIST, TARGETS[target].exe);
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

function writeChecksums(): void {
  const names = readdirSync(DIST)
    .filter((n) => n.startsWith("serverfs-") && !n.endsWith(".map"))
    .sort();
  const lines = names.map((n) => {
    const digest = createHash("sha256").update(readFileSync(join(DIST, n))).digest("hex");
    return `${digest}  ${n}\n`;
  });
  writeFileSync(join(DIST, "SHA256SUMS"), lines.join(""));
}

if (import.meta.main) {
  const requested = process.argv.slice(2);
  const unknown = requested.filter((t) => !isTarget(t));
  if (unknown.length > 0) {
    process.stderr.write(`build: unknown target(s) ${unknown.join(", ")}; known: ${Object.keys(TARGETS).join(", ")}\n`);
    process.exit(2);
  }
  const targets = (requested.length > 0 ? requested : Object.keys(TARGETS)) as TargetName[];
  mkdirSync(DIST, { recursive: true });
  // The file tools' JSON Schemas are converted here, not at every start (src/mcp/tools/fs/schemas.ts).
  const gen = Bun.spawnSync([process.execPath, join(ROOT, "build/tool-schemas.ts")], { cwd: ROOT, stdout: "inherit", stderr: "inherit", env: withoutBunOverrides(process.env) });
  if (gen.exitCode !== 0) throw new Error(`build/tool-schemas.ts failed (exit ${gen.exitCode})`);
  for (const t of targets) {
    const started = performance.now();
    const out = await compile(t);
    process.stderr.write(`build: ${t} -> ${out} (${Math.round(performance.now() - started)} ms)\n`);
  }
  writeChecksums();
  process.stderr.write(`build: wrote ${join(DIST, "SHA256SUMS")}\n`);
}
