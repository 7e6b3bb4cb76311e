// `npm run package`: every distributable into dist/ (or --out DIR):
//   serverfs-<target>[.exe]          the five executables (built by build/compile.ts, or taken from
//                                    --binaries DIR, e.g. the macOS ones after they were signed)
//   serverfs-<version>.tgz           the npm package `serverfs` (the Node launcher)
//   serverfs-<target>-<version>.tgz  the five platform packages
//   serverfs-<target>.mcpb           MCP Bundles for darwin-arm64, darwin-x64, windows-x64, linux-x64
//   server.json                      the MCP Registry entry (npm package and bundles)
//   SHA256SUMS                       sha256sum lines for all of the above
//
// Usage: bun build/package.ts [--binaries DIR] [--targets t1,t2] [--out DIR] [--repository OWNER/NAME]
// The same inputs give the same bytes (docs/maintainers/release.md says what can still differ).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { checksumLines, compile, generateBuildTimeModules, isTarget, type TargetName } from "./compile.ts";
import { bundleBytes } from "./package/mcpb.ts";
import { ALL_TARGETS, BUNDLE_TARGETS, ROOT, binaryName, bundleName, readMeta, registryName } from "./package/meta.ts";
import { packMain, packPlatform } from "./package/npm.ts";
import { serverJson, serverJsonProblems } from "./package/server-json.ts";

export interface PackageOptions {
  outDir: string;
  /** Take the executables from here instead of building them. */
  binaries?: string;
  targets: TargetName[];
  repository?: string;
}

export interface PackageResult {
  /** Every file written into outDir, by name (SHA256SUMS last). */
  files: string[];
}

function say(line: string): void {
  process.stderr.write(`package: ${line}\n`);
}

export async function buildPackages(o: PackageOptions): Promise<PackageResult> {
  const meta = readMeta(o.repository);
  mkdirSync(o.outDir, { recursive: true });
  const written: string[] = [];

  if (o.binaries === undefined) {
    generateBuildTimeModules();
    for (const t of o.targets) {
      say(`building ${t}`);
      await compile(t, o.outDir);
      written.push(binaryName(t));
    }
  } else {
    const missing = o.targets.filter((t) => !existsSync(join(o.binaries!, binaryName(t))));
    if (missing.length > 0) throw new Error(`package: --binaries ${o.binaries} lacks ${missing.map(binaryName).join(", ")}`);
    for (const t of o.targets) {
      if (resolve(o.binaries) !== resolve(o.outDir)) copyFileSync(join(o.binaries, binaryName(t)), join(o.outDir, binaryName(t)));
      written.push(binaryName(t));
    }
  }

  const work = mkdtempSync(join(tmpdir(), "serverfs-package-"));
  try {
    say("npm package serverfs");
    written.push(packMain(meta, registryName(meta), work, o.outDir));
    for (const t of o.targets) {
      say(`npm package serverfs-${t}`);
      written.push(packPlatform(meta, t, o.outDir, work, o.outDir));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const bundles = new Map<TargetName, Uint8Array>();
  for (const t of BUNDLE_TARGETS.filter((b) => o.targets.includes(b))) {
    say(`bundle ${bundleName(t)}`);
    const bytes = bundleBytes(meta, t, o.outDir);
    writeFileSync(join(o.outDir, bundleName(t)), bytes);
    bundles.set(t, bytes);
    written.push(bundleName(t));
  }

  const registry = serverJson(meta, bundles);
  const problems = serverJsonProblems(registry);
  if (problems.length > 0) throw new Error(`package: server.json breaks the registry schema: ${problems.join("; ")}`);
  writeFileSync(join(o.outDir, "server.json"), `${JSON.stringify(registry, null, 2)}\n`);
  written.push("server.json");

  writeFileSync(join(o.outDir, "SHA256SUMS"), checksumLines(o.outDir, written));
  written.push("SHA256SUMS");
  return { files: written };
}

function parse(argv: readonly string[]): PackageOptions {
  const o: PackageOptions = { outDir: join(ROOT, "dist"), targets: [...ALL_TARGETS] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    if (!["--binaries", "--targets", "--out", "--repository"].includes(flag)) throw new Error(`package: unknown argument ${flag}`);
    if (value === undefined) throw new Error(`package: ${flag} needs a value`);
    i++;
    if (flag === "--binaries") o.binaries = resolve(value);
    else if (flag === "--out") o.outDir = resolve(value);
    else if (flag === "--repository") o.repository = value;
    else {
      const names = value.split(",");
      const unknown = names.filter((n) => !isTarget(n));
      if (unknown.length > 0) throw new Error(`package: unknown target(s) ${unknown.join(", ")}; known: ${ALL_TARGETS.join(", ")}`);
      o.targets = names as TargetName[];
    }
  }
  return o;
}

if (import.meta.main) {
  try {
    const started = performance.now();
    const options = parse(process.argv.slice(2));
    const { files } = await buildPackages(options);
    say(`wrote ${files.length} files into ${options.outDir} (${Math.round(performance.now() - started)} ms)`);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
