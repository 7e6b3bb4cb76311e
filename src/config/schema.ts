// The shape of the raw configuration document, checked with arktype: types, required keys,
// unknown keys, grammars and single-field ranges. Both source formats are mapped onto this one
// shape (the TOML layout) before it is checked, so a key accepted in one format cannot be
// refused in the other. Rules that relate several fields live in normalize.ts.
//
// This module is the only importer of arktype; load.ts imports it lazily (its import costs
// ~200 ms, see bench/startup/config-load.ts).
import { type } from "arktype";
import { BOUNDS } from "./defaults.ts";
import { describeType, type KeyPath, type Problem } from "./problems.ts";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

// `boolean` is a union in arktype and reports as one; a narrowed unknown reports "a boolean".
const bool = type("unknown").narrow(
  (v, ctx): v is boolean => typeof v === "boolean" || ctx.mustBe("a boolean (true or false)"),
);
const positiveInt = type(`0 < number.integer <= ${MAX_SAFE}`).describe("a positive integer");
const str = type("string").describe("a string");
const strList = (max: number, what: string) =>
  str.array().atMostLength(max).describe(`a list of at most ${max} ${what}`);
const alias = type(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/).describe(
  "an alias: a letter, then up to 31 letters, digits, '_' or '-'",
);
const agentMode = type("'disabled' | 'review' | 'workspace-write'").describe(
  '"disabled", "review" or "workspace-write"',
);
const runtimeName = type(/^(codex|claude|qoder|fake|acp-[a-z][a-z0-9_-]{0,27})$/).describe(
  'a runtime name: "codex", "claude", "qoder", "fake" or "acp-<profile id>"',
);
const acpId = type(/^[a-z][a-z0-9_-]{0,27}$/).describe(
  "a profile id: a lowercase letter, then up to 27 lowercase letters, digits, '_' or '-'",
);

const policyFields = {
  "allow_hidden?": bool,
  "disable_default_deny?": bool,
  "extra_deny_globs?": strList(BOUNDS.maxDenyGlobs, "glob strings"),
  "max_read_bytes?": positiveInt,
  "max_read_lines?": positiveInt,
  "max_write_bytes?": positiveInt,
  "binary_transfer_enabled?": bool,
  "max_binary_transfer_bytes?": positiveInt,
} as const;

const workdir = type({
  "+": "reject",
  alias,
  path: str,
  "description?": str,
  "read_only?": bool,
  "agent_mode?": agentMode,
  "agent_runtimes?": runtimeName.array().atMostLength(BOUNDS.maxAcpProfiles + 4).describe("a list of runtime names"),
  ...policyFields,
});

const nativeRuntime = type({ "+": "reject", "enabled?": bool, "bin?": str, "use_proxy?": bool });

const acpProfile = type({
  "+": "reject",
  id: acpId,
  command: str,
  "args?": strList(BOUNDS.maxAcpArgs, "argument strings"),
  "use_proxy?": bool,
  "probe_timeout_seconds?": type(`0 < number.integer <= ${BOUNDS.maxAcpProbeTimeoutSeconds}`).describe(
    `an integer from 1 to ${BOUNDS.maxAcpProbeTimeoutSeconds}`,
  ),
  "shutdown_timeout_seconds?": type(`0 < number.integer <= ${BOUNDS.maxAcpShutdownTimeoutSeconds}`).describe(
    `an integer from 1 to ${BOUNDS.maxAcpShutdownTimeoutSeconds}`,
  ),
});

const rawDocument = type({
  "+": "reject",
  "server?": type({ "+": "reject", "log_level?": str, "state_dir?": str }),
  "limits?": type({
    "+": "reject",
    "default_list_limit?": positiveInt,
    "max_list_entries?": positiveInt,
    "default_search_results?": positiveInt,
    "max_search_results?": positiveInt,
    "max_walk_entries?": positiveInt,
    "search_timeout_seconds?": positiveInt,
    "search_max_file_bytes?": positiveInt,
    "max_edits_per_call?": positiveInt,
  }),
  "defaults?": type({ "+": "reject", ...policyFields }),
  workdirs: workdir
    .array()
    .atLeastLength(1)
    .atMostLength(BOUNDS.maxTomlWorkdirs)
    .describe(`a list of 1 to ${BOUNDS.maxTomlWorkdirs} workdirs`),
  "agent?": type({
    "+": "reject",
    "enabled?": bool,
    "enable_fake_runtime?": bool,
    "bridge_timeout_seconds?": positiveInt,
    "task_timeout_seconds?": positiveInt,
    "interaction_timeout_seconds?": positiveInt,
    "max_active_tasks?": positiveInt,
    "retention_seconds?": positiveInt,
    "result_spool_threshold_bytes?": positiveInt,
    "event_idle_timeout_seconds?": positiveInt,
    "provider_env_file?": str,
    "codex?": nativeRuntime,
    "claude?": nativeRuntime,
    "qoder?": nativeRuntime,
    "proxy?": type({
      "+": "reject",
      "enabled?": bool,
      "url?": str,
      "no_proxy?": strList(BOUNDS.maxNoProxyEntries, "host strings"),
    }),
    "acp_profiles?": acpProfile
      .array()
      .atMostLength(BOUNDS.maxAcpProfiles)
      .describe(`a list of at most ${BOUNDS.maxAcpProfiles} ACP profiles`),
  }),
});

export type RawDocument = typeof rawDocument.infer;

function valueAt(root: unknown, path: KeyPath): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[part];
  }
  return cur;
}

/** Numbers and booleans are safe to repeat back; strings may be secrets or host paths. */
function describeActual(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return describeType(value);
}

/** Check the raw document's shape. Problems come in arktype's traversal order (deterministic). */
export function checkRawDocument(raw: unknown): { ok: true; doc: RawDocument } | { ok: false; problems: Problem[] } {
  const out = rawDocument(raw);
  if (!(out instanceof type.errors)) return { ok: true, doc: out };
  const problems: Problem[] = [];
  for (const err of out) {
    const path = err.path.map((p) => (typeof p === "number" ? p : String(p)));
    let reason: string;
    if (err.code === "predicate" && err.expected === "removed") reason = "unknown key";
    else if (err.code === "required") reason = `missing (expected ${err.expected})`;
    else reason = `expected ${err.expected}, got ${describeActual(valueAt(raw, path))}`;
    problems.push({ path, reason });
  }
  return { ok: false, problems };
}
