// What every distributable says about itself, from the development package.json (which is
// private and never published): version, license, description, author, and where the source and
// the releases live. `--repository OWNER/NAME` (the release workflow passes the repository it
// runs in) overrides the repository package.json names, so npm's provenance check, the bundle
// manifests, server.json and the download URLs all name the repository that built them.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { TARGETS, type TargetName } from "../compile.ts";

export const ROOT = resolve(import.meta.dir, "../..");

export interface ReleaseMeta {
  version: string;
  description: string;
  license: string;
  author: string;
  /** `owner/name` on GitHub. */
  repository: string;
}

export function readMeta(repositoryOverride?: string): ReleaseMeta {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    version: string;
    description: string;
    license: string;
    author: string;
    repository: { url: string };
  };
  const fromPackage = /github\.com[/:]([^/]+\/[^/.]+)(\.git)?$/.exec(pkg.repository.url)?.[1];
  const repository = repositoryOverride ?? fromPackage;
  if (repository === undefined || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) {
    throw new Error(`package: the repository must be OWNER/NAME on GitHub (got ${JSON.stringify(repository ?? pkg.repository.url)})`);
  }
  return { version: pkg.version, description: pkg.description, license: pkg.license, author: pkg.author, repository };
}

export const repositoryUrl = (m: ReleaseMeta) => `https://github.com/${m.repository}`;
export const releaseDownloadUrl = (m: ReleaseMeta, asset: string) => `${repositoryUrl(m)}/releases/download/v${m.version}/${asset}`;
/** The MCP Registry name: GitHub-based namespaces are `io.github.<owner>`. */
export const registryName = (m: ReleaseMeta) => `io.github.${m.repository.split("/")[0]}/serverfs`;

/** npm's `os` and `cpu` values for each target (Node's process.platform and process.arch). */
export const NODE_PLATFORM: Record<TargetName, { os: string; cpu: string }> = {
  "linux-x64": { os: "linux", cpu: "x64" },
  "linux-arm64": { os: "linux", cpu: "arm64" },
  "darwin-arm64": { os: "darwin", cpu: "arm64" },
  "darwin-x64": { os: "darwin", cpu: "x64" },
  "windows-x64": { os: "win32", cpu: "x64" },
};

export const platformPackageName = (t: TargetName) => `serverfs-${t}`;
export const binaryName = (t: TargetName) => TARGETS[t].exe;
export const ALL_TARGETS = Object.keys(TARGETS) as TargetName[];
/** Bundles: Claude Desktop's platforms (macOS, Windows) and Linux x64. */
export const BUNDLE_TARGETS: readonly TargetName[] = ["darwin-arm64", "darwin-x64", "windows-x64", "linux-x64"];
export const bundleName = (t: TargetName) => `serverfs-${t}.mcpb`;
