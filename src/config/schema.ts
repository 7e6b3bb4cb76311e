// The shape of the raw configuration document: types, required keys, unknown keys, grammars
// and single-field ranges. Both source formats are mapped onto this one shape (the TOML layout)
// before it is checked, so a key accepted in one format cannot be refused in the other. Rules
// that relate several fields live in normalize.ts.
//
// The schema is written with @ark/schema, arktype's own validation core (the exact version
// arktype 2.2.10 pins), as node definitions rather than arktype's string DSL: the `arktype`
// entry point builds its whole keyword scope at import (~300 ms, on every `serve` start), the
// core costs ~50 ms (bench/startup/config-load.ts). Errors are the same ArkErrors either way.
// Its checks are interpreted, not compiled (./ark-jitless.ts): a configuration is checked once.
// First: it must run before @ark/schema's core loads (see the module).
import "./ark-jitless.ts";
import { ArkErrors, describeBranches, rootSchema, type ArkError } from "@ark/schema";
import { RESERVED_RUNTIME_NAMES } from "./runtime-catalog.ts";
import { ALIAS_PATTERN, BOUNDS } from "./defaults.ts";
import { didYouMeanKey } from "../common/did-you-mean.ts";
import { describeType, type KeyPath, type Problem } from "./problems.ts";
import type { ApprovalsPath } from "./types.ts";
import { ADVICE_CHOICES, ADVICE_KINDS, ADVICE_RULE_NAME_PATTERN, type RawAdviceRule } from "./advice-rules.ts";

// ---- node builders: each puts its description on every constraint, so any failure reads
// "expected <description>" rather than arktype's generic constraint wording.

type Node = ReturnType<typeof rootSchema>;

const str: Node = rootSchema({ domain: "string", meta: "a string" });

function integerIn(max: number, meta: string): Node {
  return rootSchema({
    domain: { domain: "number", meta },
    divisor: { rule: 1, meta },
    min: { rule: 0, exclusive: true, meta },
    max: { rule: max, meta },
  });
}

function matching(pattern: string, meta: string): Node {
  return rootSchema({ domain: { domain: "string", meta }, pattern: [{ rule: pattern, meta }] });
}

function listOf(element: Node, max: number, meta: string, min?: number): Node {
  return rootSchema({
    // The runtime accepts `meta` on a proto node (it is how a non-list reports "expected <meta>");
    // the published type omits it.
    proto: { proto: Array, meta } as unknown as ArrayConstructor,
    sequence: element,
    maxLength: { rule: max, meta },
    ...(min !== undefined ? { minLength: { rule: min, meta } } : {}),
  });
}

function oneOf(values: readonly string[], meta: string): Node {
  return rootSchema({ branches: values.map((unit) => ({ unit, meta })), meta });
}

/** A table with exactly these keys (`required` must be present; unknown keys are refused). */
function table(required: Record<string, Node>, optional: Record<string, Node>): Node {
  const meta = "a table";
  return rootSchema({
    domain: { domain: "object", meta },
    required: Object.entries(required).map(([key, value]) => ({ key, value })),
    optional: Object.entries(optional).map(([key, value]) => ({ key, value })),
    undeclared: "reject",
  });
}

// A union of the two units, each with the union's wording, so a failure reads "expected a boolean
// (true or false)". Not a predicate: a predicate is a function of ours that the build-time
// compilation of this schema (build/config-check.ts) could not carry into generated code.
const bool: Node = (() => {
  const meta = "a boolean (true or false)";
  return rootSchema({ branches: [{ unit: true, meta }, { unit: false, meta }], meta });
})();
const positiveInt = integerIn(Number.MAX_SAFE_INTEGER, "a positive integer");
/** `event_idle_timeout_seconds`: 0 turns the idle bound off (it has a default). */
const idleSeconds: Node = (() => {
  const meta = "0 (no idle timeout) or a positive integer";
  return rootSchema({
    domain: { domain: "number", meta },
    divisor: { rule: 1, meta },
    min: { rule: 0, meta },
    max: { rule: Number.MAX_SAFE_INTEGER, meta },
  });
})();
const strList = (max: number, what: string) => listOf(str, max, `a list of at most ${max} ${what}`);

const alias = matching(ALIAS_PATTERN, "an alias: a letter, then up to 31 letters, digits, '_' or '-'");
const runtimeName = matching(
  `^(${RESERVED_RUNTIME_NAMES.join("|")}|acp-[a-z][a-z0-9_-]{0,27})$`,
  `a runtime name: ${RESERVED_RUNTIME_NAMES.map((n) => `"${n}"`).join(", ")} or "acp-<profile id>"`,
);
const acpId = matching(
  "^[a-z][a-z0-9_-]{0,27}$",
  "a profile id: a lowercase letter, then up to 27 lowercase letters, digits, '_' or '-'",
);
const approvalsPath = oneOf(["auto", "elicitation", "tools", "terminal"], '"auto", "elicitation", "terminal" or "tools"');
const agentMode = oneOf(["disabled", "review", "workspace-write"], '"disabled", "review" or "workspace-write"');

const policyFields = {
  allow_hidden: bool,
  disable_default_deny: bool,
  extra_deny_globs: strList(BOUNDS.maxDenyGlobs, "glob strings"),
  max_read_bytes: positiveInt,
  max_read_lines: positiveInt,
  max_write_bytes: positiveInt,
  binary_transfer_enabled: bool,
  max_binary_transfer_bytes: positiveInt,
  cross_mounts: bool,
  refuse_hardlinked_reads: bool,
  respect_ignore_files: bool,
};

const workdirRequired = () => ({ alias, path: str });
const workdirOptional = () => ({
  description: str,
  read_only: bool,
  agent_mode: agentMode,
  agent_runtimes: listOf(runtimeName, BOUNDS.maxAcpProfiles + 4, "a list of runtime names"),
  ...policyFields,
});
const workdir = (): Node => table(workdirRequired(), workdirOptional());

const nativeRuntimeFields = () => ({ enabled: bool, bin: str, use_proxy: bool });
const nativeRuntime = (): Node => table({}, nativeRuntimeFields());

const proxyFields = () => ({ enabled: bool, url: str, no_proxy: strList(BOUNDS.maxNoProxyEntries, "host strings") });

const acpRequired = () => ({ id: acpId, command: str });
const acpOptional = () => ({
  args: strList(BOUNDS.maxAcpArgs, "argument strings"),
  use_proxy: bool,
  tmpdir_env: strList(BOUNDS.maxAcpTmpdirEnv, "environment variable names"),
  probe_timeout_seconds: integerIn(BOUNDS.maxAcpProbeTimeoutSeconds, `an integer from 1 to ${BOUNDS.maxAcpProbeTimeoutSeconds}`),
  shutdown_timeout_seconds: integerIn(BOUNDS.maxAcpShutdownTimeoutSeconds, `an integer from 1 to ${BOUNDS.maxAcpShutdownTimeoutSeconds}`),
});
const acpProfile = (): Node => table(acpRequired(), acpOptional());

/** `"a", "b" or "c"`, sorted: how the schema words any failed choice among strings. */
const choiceList = (values: readonly string[]) => {
  const q = [...values].sort().map((v) => `"${v}"`);
  return `${q.slice(0, -1).join(", ")} or ${q.at(-1)}`;
};
const adviceRequired = () => ({ advise: oneOf(ADVICE_CHOICES, choiceList(ADVICE_CHOICES)) });
const adviceOptional = () => ({
  name: matching(ADVICE_RULE_NAME_PATTERN, "a rule name: a letter, then up to 63 letters, digits, '_', '.' or '-'"),
  kind: oneOf(ADVICE_KINDS, choiceList(ADVICE_KINDS)),
  command_prefix: str,
  command_regex: str,
  paths: strList(BOUNDS.maxAdvicePaths, "path globs"),
  runtime: runtimeName,
  reason: str,
});
const adviceRule = (): Node => table(adviceRequired(), adviceOptional());

// Each top-level section's node is built the first time a document has that section: a deployment
// without `[agent]` never builds the agent schema (the largest), nor pays for sections it omits.
const serverFields = () => ({ log_level: str, state_dir: str });
const limitFields = () => ({
  default_list_limit: positiveInt,
  max_list_entries: positiveInt,
  default_search_results: positiveInt,
  max_search_results: positiveInt,
  max_walk_entries: positiveInt,
  search_timeout_seconds: positiveInt,
  search_max_file_bytes: positiveInt,
  max_edits_per_call: positiveInt,
  max_files_per_read: positiveInt,
  max_media_bytes: positiveInt,
  file_lock_wait_ms: positiveInt,
});
const agentFields = () => ({
  enabled: bool,
  enable_fake_runtime: bool,
  bridge_timeout_seconds: positiveInt,
  task_timeout_seconds: positiveInt,
  interaction_timeout_seconds: positiveInt,
  max_active_tasks: positiveInt,
  retention_seconds: positiveInt,
  result_spool_threshold_bytes: positiveInt,
  approvals: approvalsPath,
  event_idle_timeout_seconds: idleSeconds,
  provider_env_file: str,
  codex: nativeRuntime(),
  claude: nativeRuntime(),
  qoder: nativeRuntime(),
  proxy: table({}, proxyFields()),
  acp_profiles: listOf(acpProfile(), BOUNDS.maxAcpProfiles, `a list of at most ${BOUNDS.maxAcpProfiles} ACP profiles`),
  advice_rules: listOf(adviceRule(), BOUNDS.maxAdviceRules, `a list of at most ${BOUNDS.maxAdviceRules} advice rules`),
});

const SECTIONS: Record<string, () => Node> = {
  server: () => table({}, serverFields()),
  limits: () => table({}, limitFields()),
  defaults: () => table({}, policyFields),
  agent: () => table({}, agentFields()),
};

/**
 * The keys a table at `path` declares, for "did you mean" on an unknown key (the error path only:
 * building these lists costs what building the schema does). Array indexes are any number.
 */
function declaredKeys(path: KeyPath): string[] {
  const shape = path.map((p) => (typeof p === "number" ? "#" : p)).join(".");
  const keys = (o: object) => Object.keys(o);
  switch (shape) {
    case "":
      return ["workdirs", ...Object.keys(SECTIONS)];
    case "server":
      return keys(serverFields());
    case "limits":
      return keys(limitFields());
    case "defaults":
      return keys(policyFields);
    case "workdirs.#":
      return [...keys(workdirRequired()), ...keys(workdirOptional())];
    case "agent":
      return keys(agentFields());
    case "agent.codex":
    case "agent.claude":
    case "agent.qoder":
      return keys(nativeRuntimeFields());
    case "agent.proxy":
      return keys(proxyFields());
    case "agent.acp_profiles.#":
      return [...keys(acpRequired()), ...keys(acpOptional())];
    case "agent.advice_rules.#":
      return [...keys(adviceRequired()), ...keys(adviceOptional())];
    default:
      return [];
  }
}

const builtSections = new Map<string, Node>();
const documents = new Map<string, Node>();
let workdirList: Node | undefined;

/**
 * The document node for a document with these top-level keys. An absent optional section checks
 * nothing, so leaving it out of the table changes no verdict; a key that is not a section is
 * still refused as unknown. Sections keep their declared order, so problems keep theirs.
 */
function documentNode(raw: unknown): Node {
  const present = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? new Set(Object.keys(raw)) : new Set<string>();
  const names = Object.keys(SECTIONS).filter((name) => present.has(name));
  const signature = names.join(",");
  let node = documents.get(signature);
  if (!node) {
    workdirList ??= listOf(workdir(), BOUNDS.maxTomlWorkdirs, `a list of 1 to ${BOUNDS.maxTomlWorkdirs} workdirs`, 1);
    const optional: Record<string, Node> = {};
    for (const name of names) {
      let section = builtSections.get(name);
      if (!section) builtSections.set(name, (section = SECTIONS[name]!()));
      optional[name] = section;
    }
    node = table({ workdirs: workdirList }, optional);
    documents.set(signature, node);
  }
  return node;
}

/**
 * The node for a document that may have every section: the one build/config-check.ts compiles
 * into src/config/schema.generated.ts. Its verdict on any document equals documentNode's (a
 * section the document omits checks nothing either way).
 */
export function fullDocumentNode(): Node {
  return documentNode(Object.fromEntries([["workdirs", []], ...Object.keys(SECTIONS).map((name) => [name, {}])]));
}

// ---- the TypeScript view of a document that passed the check above.

interface RawPolicy {
  allow_hidden?: boolean;
  disable_default_deny?: boolean;
  extra_deny_globs?: string[];
  max_read_bytes?: number;
  max_read_lines?: number;
  max_write_bytes?: number;
  binary_transfer_enabled?: boolean;
  max_binary_transfer_bytes?: number;
  cross_mounts?: boolean;
  refuse_hardlinked_reads?: boolean;
  respect_ignore_files?: boolean;
}

export interface RawWorkdir extends RawPolicy {
  alias: string;
  path: string;
  description?: string;
  read_only?: boolean;
  agent_mode?: "disabled" | "review" | "workspace-write";
  agent_runtimes?: string[];
}

interface RawNativeRuntime {
  enabled?: boolean;
  bin?: string;
  use_proxy?: boolean;
}

export interface RawAcpProfile {
  id: string;
  command: string;
  args?: string[];
  use_proxy?: boolean;
  tmpdir_env?: string[];
  probe_timeout_seconds?: number;
  shutdown_timeout_seconds?: number;
}

export interface RawAgent {
  enabled?: boolean;
  enable_fake_runtime?: boolean;
  bridge_timeout_seconds?: number;
  task_timeout_seconds?: number;
  interaction_timeout_seconds?: number;
  max_active_tasks?: number;
  retention_seconds?: number;
  result_spool_threshold_bytes?: number;
  approvals?: ApprovalsPath;
  event_idle_timeout_seconds?: number;
  provider_env_file?: string;
  codex?: RawNativeRuntime;
  claude?: RawNativeRuntime;
  qoder?: RawNativeRuntime;
  proxy?: { enabled?: boolean; url?: string; no_proxy?: string[] };
  acp_profiles?: RawAcpProfile[];
  advice_rules?: RawAdviceRule[];
}

export interface RawDocument {
  server?: { log_level?: string; state_dir?: string };
  limits?: Partial<Record<
    | "default_list_limit"
    | "max_list_entries"
    | "default_search_results"
    | "max_search_results"
    | "max_walk_entries"
    | "search_timeout_seconds"
    | "search_max_file_bytes"
    | "max_edits_per_call"
    | "max_files_per_read"
    | "max_media_bytes"
    | "file_lock_wait_ms",
    number
  >>;
  defaults?: RawPolicy;
  workdirs: RawWorkdir[];
  agent?: RawAgent;
}

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

/**
 * What `err` expected, in words that never repeat the value. A union's own wording does ("k must be
 * "a" or "b" (was "zz")"), and a string may be a secret, so a union's is rebuilt from its branches:
 * the interpreter (./ark-jitless.ts) reports a failed union of choices as a union of the branches'
 * errors, where compiled checks reported the same list as one predicate.
 */
function expectedOf(err: ArkError): string {
  if (err.code !== "union") return err.expected;
  return describeBranches((err as ArkError<"union">).errors.map(expectedOf));
}

/** Check the raw document's shape. Problems come in the schema's traversal order (deterministic). */
export function checkRawDocument(raw: unknown): { ok: true; doc: RawDocument } | { ok: false; problems: Problem[] } {
  const out: unknown = documentNode(raw)(raw);
  if (!(out instanceof ArkErrors)) return { ok: true, doc: out as RawDocument };
  const problems: Problem[] = [];
  for (const err of out) {
    const path = err.path.map((p) => (typeof p === "number" ? p : String(p)));
    let reason: string;
    if (err.code === "predicate" && err.expected === "removed") {
      const name = path.at(-1);
      reason = `unknown key${typeof name === "string" ? didYouMeanKey(name, declaredKeys(path.slice(0, -1))) : ""}`;
    }
    else if (err.code === "required") reason = `missing (expected ${err.expected})`;
    else reason = `expected ${expectedOf(err)}, got ${describeActual(valueAt(raw, path))}`;
    problems.push({ path, reason });
  }
  return { ok: false, problems };
}
