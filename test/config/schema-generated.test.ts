// The build-time compiled check of the configuration (src/config/schema.generated.ts) decides every
// start whose configuration passes, without the schema: it is only sound while it is exactly what
// the generator writes from today's schema, and while it gives the schema's verdict on every
// document, accepted or refused.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { GENERATED_FILE, renderGenerated } from "../../build/config-check.ts";
import { BOUNDS } from "../../src/config/defaults.ts";
import { documentAllows } from "../../src/config/schema.generated.ts";
import { checkRawDocument } from "../../src/config/schema.ts";

const REPO = join(import.meta.dir, "../..");

type Value = unknown;
type Table = Record<string, Value>;

const policy = (): Table => ({
  allow_hidden: false,
  disable_default_deny: false,
  extra_deny_globs: ["*.sqlite"],
  max_read_bytes: 524288,
  max_read_lines: 2000,
  max_write_bytes: 1048576,
  binary_transfer_enabled: true,
  max_binary_transfer_bytes: 8388608,
  cross_mounts: false,
  refuse_hardlinked_reads: true,
  respect_ignore_files: true,
});

/** A document with every section and every key the schema declares, each with a value it accepts. */
function everyKey(): Table {
  return {
    server: { log_level: "INFO", state_dir: "/var/lib/serverfs" },
    limits: {
      default_list_limit: 100,
      max_list_entries: 1000,
      default_search_results: 50,
      max_search_results: 100,
      max_walk_entries: 200000,
      search_timeout_seconds: 15,
      search_max_file_bytes: 1048576,
      max_edits_per_call: 20,
      max_files_per_read: 10,
      max_media_bytes: 4194304,
      file_lock_wait_ms: 2000,
    },
    defaults: policy(),
    workdirs: [
      { alias: "docs", path: "/srv/docs", description: "Docs", read_only: true, ...policy() },
      { alias: "project", path: "/srv/project", read_only: false, agent_mode: "workspace-write", agent_runtimes: ["codex", "acp-gemini"] },
    ],
    agent: {
      enabled: true,
      enable_fake_runtime: false,
      bridge_timeout_seconds: 30,
      task_timeout_seconds: 7200,
      interaction_timeout_seconds: 1800,
      max_active_tasks: 2,
      retention_seconds: 604800,
      result_spool_threshold_bytes: 65536,
      approvals: "elicitation",
      event_idle_timeout_seconds: 0,
      provider_env_file: "/etc/serverfs/provider.env",
      codex: { enabled: true, bin: "codex", use_proxy: false },
      claude: { enabled: false, bin: "claude", use_proxy: true },
      qoder: { enabled: false, bin: "qodercli", use_proxy: false },
      proxy: { enabled: true, url: "http://127.0.0.1:3128", no_proxy: ["internal.example"] },
      acp_profiles: [
        { id: "gemini", command: "gemini", args: ["--acp"], use_proxy: false, tmpdir_env: ["TMPDIR"], probe_timeout_seconds: 10, shutdown_timeout_seconds: 5 },
      ],
      advice_rules: [
        { advise: "reject_once", name: "no-push", kind: "command", command_prefix: "git push", command_regex: "^git push", paths: ["src/**"], runtime: "codex", reason: "no pushes" },
      ],
    },
  };
}

const clone = <T>(v: T): T => structuredClone(v);

/** Every path to a value in `doc`, tables and lists included, in a fixed order. */
function paths(v: Value, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = at.length > 0 ? [at] : [];
  if (Array.isArray(v)) v.forEach((e, i) => out.push(...paths(e, [...at, i])));
  else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) out.push(...paths((v as Table)[k], [...at, k]));
  return out;
}

function valueAt(doc: Value, path: (string | number)[]): Value {
  return path.reduce<Value>((cur, k) => (cur as Table)[k as string], doc);
}

function parentOf(doc: Value, path: (string | number)[]): Table {
  return valueAt(doc, path.slice(0, -1)) as Table;
}

function withValue(doc: Table, path: (string | number)[], value: Value): Table {
  const d = clone(doc);
  parentOf(d, path)[path.at(-1) as string] = value;
  return d;
}

function without(doc: Table, path: (string | number)[]): Table {
  const d = clone(doc);
  const parent = parentOf(d, path);
  const key = path.at(-1) as string | number;
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
  return d;
}

/** Values of every kind, and the edges of the ranges and grammars the schema checks. */
const REPLACEMENTS: Value[] = [
  "", "x", "INFO", "review", "codex", "acp-x", "acp-", "ACP-x", "a b", "é", "9a", "a".repeat(64), "a".repeat(65),
  0, 1, -1, 1.5, 2 ** 53, 2 ** 53 - 1, Number.NaN, Number.POSITIVE_INFINITY, 600, 601, 3600, 3601,
  true, false, null, undefined, [], [""], ["x"], [1], [[]], {}, { x: 1 }, new Date(0),
];

/** Documents around `everyKey()`: every value replaced by every kind, every key removed, unknown keys added. */
function mutations(): Value[] {
  const base = everyKey();
  const docs: Value[] = [base, {}, [], null, "workdirs", 1, { workdirs: [] }, { workdirs: {} }];
  for (const path of paths(base)) {
    for (const r of REPLACEMENTS) docs.push(withValue(base, path, r));
    docs.push(without(base, path));
  }
  const tables = [[], ...paths(base).filter((p) => {
    const v = valueAt(base, p);
    return v !== null && typeof v === "object" && !Array.isArray(v);
  })];
  for (const path of tables) {
    // "constructor" and "toString" are keys of every object with a prototype: a key set read with
    // `in` must not take them for declared keys; "__proto__" is an own key here (JSON.parse).
    for (const key of ["zz", "constructor", "toString", "hasOwnProperty", "Alias", "alias "]) {
      const d = clone(base);
      const t = valueAt(d, path) as Table;
      t[key] = 1;
      docs.push(d);
    }
    const d = clone(base);
    const t = valueAt(d, path) as Table;
    Object.assign(t, JSON.parse('{"__proto__": 1}'));
    docs.push(d);
  }
  // list bounds
  const workdir = (i: number) => ({ alias: `w${i}`, path: `/srv/${i}` });
  for (const n of [0, 1, BOUNDS.maxTomlWorkdirs, BOUNDS.maxTomlWorkdirs + 1]) docs.push({ workdirs: Array.from({ length: n }, (_, i) => workdir(i)) });
  for (const n of [BOUNDS.maxDenyGlobs, BOUNDS.maxDenyGlobs + 1]) docs.push({ workdirs: [{ ...workdir(0), extra_deny_globs: Array.from({ length: n }, (_, i) => `g${i}`) }] });
  for (const n of [BOUNDS.maxAcpProfiles, BOUNDS.maxAcpProfiles + 1]) {
    docs.push({ workdirs: [workdir(0)], agent: { acp_profiles: Array.from({ length: n }, (_, i) => ({ id: `p${i}`, command: "x" })) } });
  }
  return docs;
}

describe("the build-time compiled configuration check", () => {
  test("the checked-in module is exactly what the generator writes from today's schema", () => {
    expect(readFileSync(GENERATED_FILE, "utf8")).toBe(renderGenerated());
  });

  test("it gives the schema's verdict on every document around one with every key, accepted or refused", () => {
    const docs = mutations();
    let accepted = 0;
    const disagreements: string[] = [];
    for (const d of docs) {
      const schema = checkRawDocument(d);
      if (documentAllows(d) !== schema.ok) disagreements.push(JSON.stringify(d).slice(0, 300));
      if (schema.ok) {
        accepted++;
        // what a start then uses without asking the schema: the very document it was handed
        expect(schema.doc).toBe(d as never);
      }
    }
    expect(disagreements).toEqual([]);
    // both sides of the verdict are exercised
    expect(accepted).toBeGreaterThan(100);
    expect(docs.length - accepted).toBeGreaterThan(1000);
  });

  test("the shipped example configurations pass it", () => {
    for (const name of ["examples/serverfs.toml", "examples/minimal.toml"]) {
      const doc = parse(readFileSync(join(REPO, name), "utf8"));
      expect(checkRawDocument(doc).ok).toBe(true);
      expect(documentAllows(doc)).toBe(true);
    }
  });

  test("a fresh process's generator agrees: what this process built first plays no part", () => {
    const proc = Bun.spawnSync([process.execPath, join(REPO, "build/config-check.ts"), "--check"], { cwd: REPO, stderr: "pipe" });
    expect(proc.stderr.toString()).toBe("");
    expect(proc.exitCode).toBe(0);
  });
});
