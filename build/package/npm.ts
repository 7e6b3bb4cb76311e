// The npm packages: `serverfs` (the Node launcher as its `bin`, one platform package per target
// as optionalDependencies) and `serverfs-<target>` (the executable only, with `os` and `cpu` so
// npm installs just the one that fits). Each is staged in a fresh directory with a package.json
// written here, then packed by `npm pack`, which stamps every entry with the same fixed time and
// orders them itself, so the tarball depends only on the staged bytes.
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TargetName } from "../compile.ts";
import { ALL_TARGETS, NODE_PLATFORM, ROOT, binaryName, platformPackageName, repositoryUrl, type ReleaseMeta } from "./meta.ts";

function common(m: ReleaseMeta) {
  return {
    version: m.version,
    license: m.license,
    author: m.author,
    repository: { type: "git", url: `git+${repositoryUrl(m)}.git` },
    homepage: `${repositoryUrl(m)}#readme`,
    bugs: { url: `${repositoryUrl(m)}/issues` },
  };
}

export function mainPackageJson(m: ReleaseMeta, mcpName: string): Record<string, unknown> {
  return {
    name: "serverfs",
    ...common(m),
    description: m.description,
    keywords: ["mcp", "model-context-protocol", "mcp-server", "filesystem", "coding-agent"],
    bin: { serverfs: "bin/serverfs.js" },
    files: ["bin/serverfs.js", "README.md"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(ALL_TARGETS.map((t) => [platformPackageName(t), m.version])),
    // The MCP Registry checks that an npm package claims the server name it is listed under.
    mcpName,
  };
}

export function platformPackageJson(m: ReleaseMeta, t: TargetName): Record<string, unknown> {
  const { os, cpu } = NODE_PLATFORM[t];
  return {
    name: platformPackageName(t),
    ...common(m),
    description: `The serverfs executable for ${t}; installed by the serverfs package, not on its own.`,
    os: [os],
    cpu: [cpu],
    files: [`bin/${os === "win32" ? "serverfs.exe" : "serverfs"}`],
    preferUnplugged: true,
  };
}

const README = (m: ReleaseMeta) => `# serverfs

MCP file server over chosen directories, and a bridge to coding agents, without a shell.

\`\`\`sh
npx -y serverfs serve --workdir docs=~/docs
\`\`\`

This package holds a small Node launcher; npm installs the executable for your platform from
one of its optional dependencies (serverfs-linux-x64, serverfs-linux-arm64, serverfs-darwin-arm64,
serverfs-darwin-x64, serverfs-windows-x64). Documentation: ${repositoryUrl(m)}#readme
`;

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** `npm pack` of a staged directory into `outDir`; returns the tarball's file name. */
function npmPack(stage: string, outDir: string): string {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = Bun.spawnSync([npm, "pack", "--json", "--pack-destination", outDir, "--ignore-scripts"], {
    cwd: stage,
    stdout: "pipe",
    stderr: "pipe",
    // A fresh, empty npm configuration: the builder's own .npmrc must not change what is packed.
    env: { ...process.env, npm_config_userconfig: join(stage, "..", "empty-npmrc") },
  });
  if (r.exitCode !== 0) throw new Error(`npm pack failed in ${stage}: ${r.stderr.toString()}`);
  const [{ filename }] = JSON.parse(r.stdout.toString()) as [{ filename: string }];
  return filename;
}

export function packMain(m: ReleaseMeta, mcpName: string, work: string, outDir: string): string {
  const stage = join(work, "npm-serverfs");
  mkdirSync(join(stage, "bin"), { recursive: true });
  writeFileSync(join(work, "empty-npmrc"), "");
  copyFileSync(join(ROOT, "build/npm/launcher.cjs"), join(stage, "bin/serverfs.js"));
  chmodSync(join(stage, "bin/serverfs.js"), 0o755);
  writeFileSync(join(stage, "README.md"), README(m));
  writeJson(join(stage, "package.json"), mainPackageJson(m, mcpName));
  return npmPack(stage, outDir);
}

export function packPlatform(m: ReleaseMeta, t: TargetName, binaries: string, work: string, outDir: string): string {
  const stage = join(work, `npm-${platformPackageName(t)}`);
  mkdirSync(join(stage, "bin"), { recursive: true });
  writeFileSync(join(work, "empty-npmrc"), "");
  const exe = join(stage, "bin", NODE_PLATFORM[t].os === "win32" ? "serverfs.exe" : "serverfs");
  copyFileSync(join(binaries, binaryName(t)), exe);
  chmodSync(exe, 0o755);
  writeJson(join(stage, "package.json"), platformPackageJson(m, t));
  return npmPack(stage, outDir);
}
