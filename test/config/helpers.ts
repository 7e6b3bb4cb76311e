// Shared helpers for the configuration tests: real files in a temp dir, the real loader, and
// the real CLI as a subprocess.
import { expect } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { loadRegistry, type LoadedRegistry, type LoadInput } from "../../src/config/load.ts";
import { ServerfsError } from "../../src/errors.ts";
import { REPO, runCli as supportRunCli, type CliResult } from "../support/proc.ts";
import { tempDir as supportTempDir } from "../support/temp.ts";

export { BUN, REPO, type CliResult } from "../support/proc.ts";
/** Remove every temp dir made so far; each test file registers it with afterAll. */
export { cleanupTempDirs } from "../support/temp.ts";

export function tempDir(): string {
  return supportTempDir("serverfs-config-test-");
}

let counter = 0;
/** Write `text` to a fresh file in a fresh temp dir; returns its path. */
export function writeTemp(text: string, name?: string): string {
  const file = path.join(tempDir(), name ?? `config-${++counter}`);
  fs.writeFileSync(file, text);
  return file;
}

export function toml(text: string): LoadInput & { file: string } {
  const file = writeTemp(text, `c${++counter}.toml`);
  return { configFile: file, file };
}

export function env(text: string): LoadInput & { file: string } {
  const file = writeTemp(text, `c${++counter}.env`);
  return { envFile: file, file };
}

/** A [[workdirs]] table. */
export function wd(alias: string, p = "/srv/data", extra = ""): string {
  return `[[workdirs]]\nalias = ${JSON.stringify(alias)}\npath = ${JSON.stringify(p)}\n${extra}`;
}

/** An executable script file (a stand-in ACP agent command). */
export function executable(dir = tempDir(), name = "agent"): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return file;
}

export async function load(input: LoadInput): Promise<LoadedRegistry> {
  return loadRegistry(input);
}

/** Load, expect a CONFIGURATION_ERROR, return every problem line. */
export async function problems(input: LoadInput): Promise<string[]> {
  let caught: unknown;
  try {
    await loadRegistry(input);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ServerfsError);
  const err = caught as ServerfsError;
  expect(err.code).toBe("CONFIGURATION_ERROR");
  const list = err.details?.problems as string[];
  expect(Array.isArray(list)).toBe(true);
  expect(list.length).toBeGreaterThan(0);
  expect(err.message.startsWith(list[0]!)).toBe(true);
  return list;
}

/** Expect exactly one problem naming `key` in `file`, whose reason contains `reason`. */
export async function expectProblem(input: LoadInput & { file: string }, key: string, reason?: string): Promise<string> {
  const list = await problems(input);
  const prefix = key === "" ? `${input.file}: ` : `${input.file}: ${key}: `;
  // A file-level problem has no key before its reason; the "; fix: ..." it may end with is not a key.
  const hit = list.find((p) => p.startsWith(prefix) && (key !== "" || !p.slice(prefix.length).split("; fix: ")[0]!.includes(": ")));
  if (!hit) throw new Error(`no problem for key '${key}' in:\n${list.join("\n")}`);
  if (reason !== undefined) expect(hit).toContain(reason);
  return hit;
}

/** The real CLI, run from the repo root without SERVERFS_DEBUG (so errors print as users see them). */
export function runCli(args: string[], cwd = REPO): CliResult {
  return supportRunCli(args, { cwd, env: { ...process.env, SERVERFS_DEBUG: "" } });
}
