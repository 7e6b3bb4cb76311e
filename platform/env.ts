// The environment a provider child is started with. Bun reads BUN_OPTIONS (e.g. `--preload x.js`),
// BUN_BE_BUN (turns a compiled serverfs into the full bun CLI) and BUN_FEATURE_FLAG_* (e.g.
// no-orphans) from the environment, so a child that happens to be Bun-based, or serverfs itself,
// would change behaviour. SERVERFS_* variables are serverfs-internal and never belong to a provider;
// the only one a child gets is SERVERFS_RUN_ID, the per-task marker used to find leftovers.
//
// Names are compared case-insensitively: Windows environment names are case-insensitive, and on
// POSIX dropping an oddly-cased `bun_options` costs nothing.

export const RUN_ID_VARIABLE = "SERVERFS_RUN_ID";

/** Run ids go verbatim into the environment and into cgroup names: keep them boring. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function isScrubbedName(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    upper === "BUN_OPTIONS" ||
    upper === "BUN_BE_BUN" ||
    upper.startsWith("BUN_FEATURE_FLAG_") ||
    upper.startsWith("SERVERFS_")
  );
}

/**
 * A copy of `env` without the variables above and without undefined values. With `runId`, the
 * copy carries `SERVERFS_RUN_ID=<runId>` as its only serverfs variable.
 */
export function scrubEnv(env: Record<string, string | undefined>, runId?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isScrubbedName(name)) continue;
    // A name with '=' or NUL cannot be represented in an environment block; dropping it is
    // safer than letting the OS split it into a different variable.
    if (name.length === 0 || name.includes("=") || name.includes("\0") || value.includes("\0")) continue;
    // Defined, not assigned: a variable literally named `__proto__` is kept as a variable instead
    // of replacing the copy's prototype.
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  if (runId !== undefined) out[RUN_ID_VARIABLE] = runId;
  return out;
}
