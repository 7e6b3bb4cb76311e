// MCP Bundles (.mcpb): one per platform, each a zip of manifest.json and server/serverfs[.exe].
// The manifest is validated by @anthropic-ai/mcpb against manifest_version 0.3 (the spec's
// current version; 0.4 only adds the experimental "uv" server type). The user picks read-only
// and read-write folders; the host expands each picked list into separate arguments after
// `--workdir-ro` / `--workdir-rw`, and serve names each workdir after its folder
// (src/config/folder-workdirs.ts). A configuration file can be picked instead.
//
// The zip is written here rather than by `mcpb pack`, with the same entries, compression level
// and Unix modes, but a fixed time and sorted order: mcpb pack stamps the current time and
// takes the file system's readdir order, so the same files would give different bytes.
import { McpbManifestSchema } from "@anthropic-ai/mcpb/schemas/0.3";
import { zipSync } from "fflate";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TargetName } from "../compile.ts";
import { NODE_PLATFORM, binaryName, repositoryUrl, type ReleaseMeta } from "./meta.ts";

export const MANIFEST_VERSION = "0.3";

/** Zip entry time: 1980-01-01 00:00 local, the DOS epoch, which encodes the same in every zone. */
const ZIP_TIME = new Date(1980, 0, 1, 0, 0, 0);

export const bundleExecutable = (t: TargetName) => (NODE_PLATFORM[t].os === "win32" ? "server/serverfs.exe" : "server/serverfs");

export function bundleManifest(m: ReleaseMeta, t: TargetName): Record<string, unknown> {
  const entry = bundleExecutable(t);
  return {
    manifest_version: MANIFEST_VERSION,
    name: "serverfs",
    display_name: "serverfs",
    version: m.version,
    description: "Chosen folders for the assistant, through narrow file tools: no shell, nothing outside them.",
    long_description:
      "serverfs exposes the folders you pick through file tools (list, tree, find, search, read; create, edit, " +
      "move and delete only in read-write folders). Paths are resolved by the kernel without following any " +
      "symlink, so nothing outside a folder is reachable. Each folder appears under its own name. For " +
      "descriptions, deny globs, binary transfer or coding agents, pick a serverfs.toml instead.",
    author: { name: m.author },
    repository: { type: "git", url: `${repositoryUrl(m)}.git` },
    homepage: repositoryUrl(m),
    documentation: `${repositoryUrl(m)}#readme`,
    support: `${repositoryUrl(m)}/issues`,
    license: m.license,
    keywords: ["files", "filesystem", "folders", "search"],
    server: {
      type: "binary",
      entry_point: entry,
      mcp_config: {
        command: `\${__dirname}/${entry}`,
        args: [
          "serve",
          "--config",
          "${user_config.config_file}",
          "--workdir-ro",
          "${user_config.read_only_folders}",
          "--workdir-rw",
          "${user_config.read_write_folders}",
        ],
        env: {},
      },
    },
    compatibility: { platforms: [NODE_PLATFORM[t].os] },
    user_config: {
      read_only_folders: {
        type: "directory",
        title: "Read-only folders",
        description: "Folders the assistant may read and search. Each appears under its own name.",
        multiple: true,
        required: false,
        default: [],
      },
      read_write_folders: {
        type: "directory",
        title: "Read-write folders",
        description: "Folders the assistant may also change: create, edit, move and delete files.",
        multiple: true,
        required: false,
        default: [],
      },
      // A list, like the folders, because a host leaves an unset single value in the arguments
      // as the literal placeholder, while an empty list expands to nothing.
      config_file: {
        type: "file",
        title: "Configuration file (instead of folders)",
        description: "A serverfs.toml to use instead of the folders above. Pick at most one; leave empty to use the folders.",
        multiple: true,
        required: false,
        default: [],
      },
    },
  };
}

/** The manifest as @anthropic-ai/mcpb's strict schema for its manifest_version sees it. */
export function manifestProblems(manifest: unknown): string[] {
  const parsed = McpbManifestSchema.safeParse(manifest);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
}

export function bundleBytes(m: ReleaseMeta, t: TargetName, binaries: string): Uint8Array {
  const manifest = bundleManifest(m, t);
  const problems = manifestProblems(manifest);
  if (problems.length > 0) throw new Error(`package: the ${t} bundle manifest is invalid: ${problems.join("; ")}`);
  const entries: Record<string, [Uint8Array, { os: number; attrs: number }]> = {
    "manifest.json": [new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`), { os: 3, attrs: 0o644 << 16 }],
    [bundleExecutable(t)]: [readFileSync(join(binaries, binaryName(t))), { os: 3, attrs: 0o755 << 16 }],
  };
  const sorted = Object.fromEntries(Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return zipSync(sorted, { level: 9, mtime: ZIP_TIME });
}
