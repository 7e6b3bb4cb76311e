// `serve --workdir-ro DIR ... --workdir-rw DIR ...`: workdirs given as bare folders, the way an MCP
// Bundle host passes the folders a user picked (a list expands into separate arguments, with no
// room for an alias). Each folder's alias is its own name, fitted to the alias grammar and made
// unique; the folders then become ordinary `--workdir ALIAS=PATH` specs, so they are resolved and
// checked by exactly the rules of `--workdir` (registryFromWorkdirArgs in load.ts).
import { ALIAS_PATTERN } from "./defaults.ts";

export interface FolderLists {
  readOnly: readonly string[];
  readWrite: readonly string[];
}

const MAX_ALIAS = 32;
const ALIAS = new RegExp(ALIAS_PATTERN);

/** The folder's last path component as an alias: `My Docs` -> `My-Docs`, `2024 notes` -> `notes`. */
export function aliasFromFolder(folder: string): string {
  const name = folder.replace(/[\\/]+$/, "").split(/[\\/]/).pop() ?? "";
  const alias = name
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^[^A-Za-z]+/, "")
    .slice(0, MAX_ALIAS)
    .replace(/-+$/, "");
  return alias === "" ? "folder" : alias;
}

/**
 * `ALIAS=PATH:ro` / `ALIAS=PATH:rw` specs for the folders, read-only first, in the order given.
 * An alias already `taken` (by an explicit `--workdir`) or derived earlier gets `-2`, `-3`, ...;
 * names are compared without case, so `Docs` and `docs` never sit side by side. The mode suffix
 * is always written, so a folder whose name ends in `:rw` keeps that name.
 */
export function folderWorkdirSpecs(folders: FolderLists, taken: readonly string[] = []): string[] {
  const used = new Set(taken.map((a) => a.toLowerCase()));
  const specs: string[] = [];
  const add = (folder: string, mode: "ro" | "rw") => {
    const alias = uniqueAlias(aliasFromFolder(folder), used);
    used.add(alias.toLowerCase());
    specs.push(`${alias}=${folder}:${mode}`);
  };
  for (const f of folders.readOnly) add(f, "ro");
  for (const f of folders.readWrite) add(f, "rw");
  return specs;
}

function uniqueAlias(base: string, used: ReadonlySet<string>): string {
  if (!used.has(base.toLowerCase())) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, MAX_ALIAS - suffix.length).replace(/-+$/, "")}${suffix}`;
    if (ALIAS.test(candidate) && !used.has(candidate.toLowerCase())) return candidate;
  }
}
