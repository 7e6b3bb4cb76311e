// The Linux `.env` compatibility format → the raw document (the TOML shape). This module only
// turns strings into typed values and places them; every rule about the values is applied
// afterwards by the same schema and normalizer as serverfs.toml.
//
// Keys: `WORKDIR_01..16_<FIELD>` slots, the `SERVERFS_*` globals of ENV_GLOBALS, and
// `SERVERFS_ACP_PROFILES_JSON` (a one-line JSON array). Any other `SERVERFS_*`/`WORKDIR_*` key is
// an error; keys outside those two prefixes belong to other tools and are ignored.
import { didYouMeanKey } from "../common/did-you-mean.ts";
import { NATIVE_DESCRIPTORS, NATIVE_RUNTIMES } from "./runtime-catalog.ts";
import { BOUNDS } from "./defaults.ts";
import { parseEnvText } from "./env-syntax.ts";
import { findDuplicateJsonKey } from "./json-duplicate-keys.ts";
import { configurationError, dottedKey, type KeyPath, type NamedProblem } from "./problems.ts";
import { readConfigText } from "./read-source.ts";
import type { ParsedSource } from "./toml-source.ts";

type Kind = "bool" | "int" | "string" | "list";

/** Global keys and where they land in the raw document. */
export const ENV_GLOBALS: Readonly<Record<string, { path: readonly string[]; kind: Kind }>> = {
  SERVERFS_LOG_LEVEL: { path: ["server", "log_level"], kind: "string" },
  SERVERFS_STATE_DIR: { path: ["server", "state_dir"], kind: "string" },
  SERVERFS_DEFAULT_LIST_LIMIT: { path: ["limits", "default_list_limit"], kind: "int" },
  SERVERFS_MAX_LIST_ENTRIES: { path: ["limits", "max_list_entries"], kind: "int" },
  SERVERFS_DEFAULT_SEARCH_RESULTS: { path: ["limits", "default_search_results"], kind: "int" },
  SERVERFS_MAX_SEARCH_RESULTS: { path: ["limits", "max_search_results"], kind: "int" },
  SERVERFS_MAX_WALK_ENTRIES: { path: ["limits", "max_walk_entries"], kind: "int" },
  SERVERFS_SEARCH_TIMEOUT_SECONDS: { path: ["limits", "search_timeout_seconds"], kind: "int" },
  SERVERFS_SEARCH_MAX_FILE_BYTES: { path: ["limits", "search_max_file_bytes"], kind: "int" },
  SERVERFS_MAX_EDITS_PER_CALL: { path: ["limits", "max_edits_per_call"], kind: "int" },
  SERVERFS_MAX_FILES_PER_READ: { path: ["limits", "max_files_per_read"], kind: "int" },
  SERVERFS_MAX_MEDIA_BYTES: { path: ["limits", "max_media_bytes"], kind: "int" },
  SERVERFS_FILE_LOCK_WAIT_MS: { path: ["limits", "file_lock_wait_ms"], kind: "int" },
  SERVERFS_ALLOW_HIDDEN: { path: ["defaults", "allow_hidden"], kind: "bool" },
  SERVERFS_DISABLE_DEFAULT_DENY: { path: ["defaults", "disable_default_deny"], kind: "bool" },
  SERVERFS_EXTRA_DENY_GLOBS: { path: ["defaults", "extra_deny_globs"], kind: "list" },
  SERVERFS_MAX_READ_BYTES: { path: ["defaults", "max_read_bytes"], kind: "int" },
  SERVERFS_MAX_READ_LINES: { path: ["defaults", "max_read_lines"], kind: "int" },
  SERVERFS_MAX_WRITE_BYTES: { path: ["defaults", "max_write_bytes"], kind: "int" },
  SERVERFS_BINARY_TRANSFER_ENABLED: { path: ["defaults", "binary_transfer_enabled"], kind: "bool" },
  SERVERFS_MAX_BINARY_TRANSFER_BYTES: { path: ["defaults", "max_binary_transfer_bytes"], kind: "int" },
  SERVERFS_CROSS_MOUNTS: { path: ["defaults", "cross_mounts"], kind: "bool" },
  SERVERFS_REFUSE_HARDLINKED_READS: { path: ["defaults", "refuse_hardlinked_reads"], kind: "bool" },
  SERVERFS_RESPECT_IGNORE_FILES: { path: ["defaults", "respect_ignore_files"], kind: "bool" },
  SERVERFS_AGENT_BRIDGE_ENABLED: { path: ["agent", "enabled"], kind: "bool" },
  SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: { path: ["agent", "enable_fake_runtime"], kind: "bool" },
  SERVERFS_AGENT_BRIDGE_TIMEOUT_SECONDS: { path: ["agent", "bridge_timeout_seconds"], kind: "int" },
  SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: { path: ["agent", "task_timeout_seconds"], kind: "int" },
  SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: { path: ["agent", "interaction_timeout_seconds"], kind: "int" },
  SERVERFS_AGENT_MAX_ACTIVE_TASKS: { path: ["agent", "max_active_tasks"], kind: "int" },
  SERVERFS_AGENT_RETENTION_SECONDS: { path: ["agent", "retention_seconds"], kind: "int" },
  SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES: { path: ["agent", "result_spool_threshold_bytes"], kind: "int" },
  SERVERFS_AGENT_APPROVALS: { path: ["agent", "approvals"], kind: "string" },
  SERVERFS_AGENT_EVENT_IDLE_TIMEOUT_SECONDS: { path: ["agent", "event_idle_timeout_seconds"], kind: "int" },
  SERVERFS_AGENT_PROVIDER_ENV_FILE: { path: ["agent", "provider_env_file"], kind: "string" },
  // SERVERFS_CODEX_ENABLED, _BIN, _USE_PROXY and the same for every native runtime in the catalog.
  ...Object.fromEntries(
    NATIVE_RUNTIMES.flatMap((n) => {
      const prefix = NATIVE_DESCRIPTORS[n].envPrefix;
      return [
        [`${prefix}_ENABLED`, { path: ["agent", n, "enabled"], kind: "bool" as const }],
        [`${prefix}_BIN`, { path: ["agent", n, "bin"], kind: "string" as const }],
        [`${prefix}_USE_PROXY`, { path: ["agent", n, "use_proxy"], kind: "bool" as const }],
      ];
    }),
  ),
  SERVERFS_AGENT_PROXY_ENABLED: { path: ["agent", "proxy", "enabled"], kind: "bool" },
  SERVERFS_AGENT_NO_PROXY: { path: ["agent", "proxy", "no_proxy"], kind: "list" },
};

/** Keys handled specially below (they do not map one-to-one onto a raw-document key). */
const SPECIAL_KEYS = new Set([
  "SERVERFS_AGENT_TASK_RETENTION_HOURS",
  "SERVERFS_PROXY_HOST",
  "SERVERFS_PROXY_PORT",
  "SERVERFS_PROXY_USERNAME",
  "SERVERFS_PROXY_PASSWORD",
  "SERVERFS_ACP_PROFILES_JSON",
]);

export const WORKDIR_FIELDS: Readonly<Record<string, Kind>> = {
  ALIAS: "string",
  PATH: "string",
  DESCRIPTION: "string",
  READ_ONLY: "bool",
  ALLOW_HIDDEN: "bool",
  DISABLE_DEFAULT_DENY: "bool",
  BINARY_TRANSFER_ENABLED: "bool",
  EXTRA_DENY_GLOBS: "list",
  MAX_READ_BYTES: "int",
  MAX_READ_LINES: "int",
  MAX_WRITE_BYTES: "int",
  MAX_BINARY_TRANSFER_BYTES: "int",
  CROSS_MOUNTS: "bool",
  REFUSE_HARDLINKED_READS: "bool",
  RESPECT_IGNORE_FILES: "bool",
  AGENT_MODE: "string",
  AGENT_RUNTIMES: "list",
};

const WORKDIR_KEY = /^WORKDIR_(\d{2})_([A-Z_]+)$/;
const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);

type Converted = { ok: true; value: unknown } | { ok: false; reason: string };

function convert(kind: Kind, text: string): Converted {
  switch (kind) {
    case "string":
      return { ok: true, value: text };
    case "list":
      return { ok: true, value: text.split(",").map((s) => s.trim()).filter((s) => s !== "") };
    case "bool": {
      const word = text.toLowerCase();
      if (TRUE_WORDS.has(word)) return { ok: true, value: true };
      if (FALSE_WORDS.has(word)) return { ok: true, value: false };
      return { ok: false, reason: "expected true or false (also accepted: 1/0, yes/no, on/off)" };
    }
    case "int": {
      if (!/^[+-]?\d{1,16}$/.test(text)) return { ok: false, reason: "expected a positive integer" };
      const n = Number(text);
      if (!Number.isSafeInteger(n)) return { ok: false, reason: "expected a positive integer" };
      return { ok: true, value: n };
    }
  }
}

function setPath(root: Record<string, unknown>, path: readonly (string | number)[], value: unknown): void {
  let cur: Record<string | number, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) {
    const part = path[i]!;
    const next = cur[part];
    if (next === undefined || next === null || typeof next !== "object") {
      const created: Record<string, unknown> = {};
      cur[part] = created;
      cur = created;
    } else cur = next as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

/** SERVERFS_PROXY_HOST/PORT → the URL the TOML format writes directly. */
function proxyUrl(host: string, port: string): string {
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

export function parseEnvSource(file: string): ParsedSource {
  const { entries, problems } = parseEnvText(readConfigText(file));
  const raw: Record<string, unknown> = {};
  /** Where a raw-document path came from when it is not the table's one-to-one key. */
  const origin = new Map<string, string>();
  const slots = new Map<number, Record<string, unknown>>();
  const value = (key: string) => {
    const v = entries.get(key)?.value;
    return v === undefined || v === "" ? undefined : v;
  };

  for (const [key, { value: text }] of entries) {
    if (!key.startsWith("SERVERFS_") && !key.startsWith("WORKDIR_")) continue;
    const slotMatch = WORKDIR_KEY.exec(key);
    if (key.startsWith("WORKDIR_")) {
      const slot = slotMatch ? Number(slotMatch[1]) : 0;
      const field = slotMatch?.[2] ?? "";
      const kind = WORKDIR_FIELDS[field];
      if (!slotMatch || slot < 1 || slot > BOUNDS.envSlots || kind === undefined) {
        const known = slotMatch ? Object.keys(WORKDIR_FIELDS).map((f) => `WORKDIR_${slotMatch[1]}_${f}`) : [];
        const hint = didYouMeanKey(key, known);
        problems.push({ key, reason: hint !== "" ? `unknown key${hint}` : `unknown key (slots are WORKDIR_01..${BOUNDS.envSlots}_<FIELD>)` });
        continue;
      }
      if (text === "") continue;
      const converted = convert(kind, field === "DESCRIPTION" ? text.trim() : text);
      if (!converted.ok) {
        problems.push({ key, reason: converted.reason });
        continue;
      }
      if (field === "DESCRIPTION" && converted.value === "") continue;
      const obj = slots.get(slot) ?? {};
      obj[field.toLowerCase()] = converted.value;
      slots.set(slot, obj);
      continue;
    }
    if (SPECIAL_KEYS.has(key)) continue;
    const spec = ENV_GLOBALS[key];
    if (!spec) {
      problems.push({ key, reason: `unknown key${didYouMeanKey(key, [...Object.keys(ENV_GLOBALS), ...SPECIAL_KEYS])}` });
      continue;
    }
    if (text === "") continue;
    const converted = convert(spec.kind, text);
    if (!converted.ok) problems.push({ key, reason: converted.reason });
    else setPath(raw, spec.path, converted.value);
  }

  const hours = value("SERVERFS_AGENT_TASK_RETENTION_HOURS");
  if (hours !== undefined) {
    if (value("SERVERFS_AGENT_RETENTION_SECONDS") !== undefined) {
      problems.push({
        key: "SERVERFS_AGENT_TASK_RETENTION_HOURS",
        reason: "set either this or SERVERFS_AGENT_RETENTION_SECONDS, not both",
      });
    } else {
      const converted = convert("int", hours);
      if (!converted.ok) problems.push({ key: "SERVERFS_AGENT_TASK_RETENTION_HOURS", reason: converted.reason });
      else {
        setPath(raw, ["agent", "retention_seconds"], (converted.value as number) * 3600);
        origin.set("agent.retention_seconds", "SERVERFS_AGENT_TASK_RETENTION_HOURS");
      }
    }
  }

  for (const key of ["SERVERFS_PROXY_USERNAME", "SERVERFS_PROXY_PASSWORD"]) {
    if (value(key) !== undefined) {
      problems.push({ key, reason: "proxy credentials are refused: the agent proxy must be credentialless" });
    }
  }
  const host = value("SERVERFS_PROXY_HOST");
  const port = value("SERVERFS_PROXY_PORT");
  if ((host === undefined) !== (port === undefined)) {
    problems.push({
      key: host === undefined ? "SERVERFS_PROXY_HOST" : "SERVERFS_PROXY_PORT",
      reason: "SERVERFS_PROXY_HOST and SERVERFS_PROXY_PORT are set together or not at all",
    });
  } else if (host !== undefined && port !== undefined) {
    setPath(raw, ["agent", "proxy", "url"], proxyUrl(host, port));
    origin.set("agent.proxy.url", "SERVERFS_PROXY_HOST/SERVERFS_PROXY_PORT");
  }

  const acpJson = value("SERVERFS_ACP_PROFILES_JSON");
  if (acpJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(acpJson);
    } catch {
      // JSON.parse's message quotes the input; say only what is expected.
      problems.push({ key: "SERVERFS_ACP_PROFILES_JSON", reason: "malformed JSON (expected a one-line JSON array of profiles)" });
    }
    if (parsed !== undefined) {
      const duplicate = findDuplicateJsonKey(acpJson);
      if (duplicate) {
        problems.push({ key: `SERVERFS_ACP_PROFILES_JSON${dottedKey(duplicate.slice(0, -1)).replace(/^\(document\)$/, "")}`, reason: `duplicate key '${String(duplicate[duplicate.length - 1])}'` });
      } else setPath(raw, ["agent", "acp_profiles"], parsed);
    }
  }

  const slotNumbers = [...slots.keys()].sort((a, b) => a - b);
  if (slotNumbers.length > 0) raw.workdirs = slotNumbers.map((n) => slots.get(n));

  if (problems.length > 0) throw configurationError(file, problems);
  return { raw, namer: envNamer(slotNumbers, origin) };
}

function pad(slot: number): string {
  return String(slot).padStart(2, "0");
}

/** Names a raw-document path as the .env key an operator would edit. */
function envNamer(slotNumbers: readonly number[], origin: ReadonlyMap<string, string>) {
  const byPath = new Map<string, string>();
  for (const [key, spec] of Object.entries(ENV_GLOBALS)) byPath.set(spec.path.join("."), key);
  byPath.set("agent.proxy.url", "SERVERFS_PROXY_HOST/SERVERFS_PROXY_PORT");
  return (path: KeyPath): string => {
    const [head, second, third] = path;
    if (head === "workdirs") {
      if (typeof second !== "number") return "WORKDIR_NN_ALIAS (no workdir slot is set)";
      const slot = pad(slotNumbers[second] ?? second + 1);
      if (typeof third !== "string") return `WORKDIR_${slot}_*`;
      return `WORKDIR_${slot}_${third.toUpperCase()}`;
    }
    if (head === "agent" && second === "acp_profiles") {
      return `SERVERFS_ACP_PROFILES_JSON${dottedKey(path.slice(2)).replace(/^\(document\)$/, "")}`;
    }
    for (let n = path.length; n > 0; n--) {
      const joined = path.slice(0, n).join(".");
      const named = origin.get(joined) ?? byPath.get(joined);
      if (named) return named;
    }
    return dottedKey(path);
  };
}
