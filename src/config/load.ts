// The one loader. Every command that needs the deployment calls `loadRegistry` (or, for the
// zero-config `serve --workdir`, `registryFromWorkdirArgs`); all three sources produce the same
// raw document shape and go through the same schema check and the same normalizer, so nothing
// is accepted from one source and refused from another.
import { parseEnvSource } from "./env-source.ts";
import { ALIAS_PATTERN, BOUNDS } from "./defaults.ts";
import { currentHomeFacts, type HomeFacts } from "./home-path.ts";
import { independentFieldProblems, normalizeDocument } from "./normalize.ts";
import { configurationError, nameProblems, type KeyNamer } from "./problems.ts";
import { parseTomlSource } from "./toml-source.ts";
import type { RawDocument } from "./schema.ts";
import type { Registry, RegistrySource } from "./types.ts";
import { parseWorkdirSpec } from "./workdir-spec.ts";
import { ServerfsError } from "../errors.ts";

export type LoadInput = { configFile: string } | { envFile: string };

export interface LoadedRegistry {
  registry: Registry;
  source: RegistrySource;
  /** Names a raw-document key in the vocabulary of the source (for messages about it). */
  keyName: KeyNamer;
}

export async function loadRegistry(input: LoadInput): Promise<LoadedRegistry> {
  if ("configFile" in input) {
    const { raw, namer } = parseTomlSource(input.configFile);
    const registry = await validate(raw, namer, input.configFile);
    return { registry, source: { format: "toml", file: input.configFile }, keyName: namer };
  }
  const { raw, namer } = parseEnvSource(input.envFile);
  const registry = await validate(raw, namer, input.envFile);
  return { registry, source: { format: "env", file: input.envFile }, keyName: namer };
}

/**
 * `serve --workdir ALIAS=PATH[:rw|:ro]` (repeatable): read-only unless `:rw` (either mode in any
 * case; other letters after the last `:` are a USAGE_ERROR, src/config/workdir-spec.ts). A relative PATH
 * is resolved against the current directory (so `--workdir sample=examples/sample` works from a
 * checkout) and a leading `~` or `~/` is the home directory (MCP hosts start serve without a
 * shell); a `..` component is refused before either, exactly as in a config file.
 */
export async function registryFromWorkdirArgs(
  specs: readonly string[],
  cwd: string = process.cwd(),
  home: HomeFacts = currentHomeFacts(),
): Promise<LoadedRegistry> {
  const label = "--workdir";
  if (specs.length === 0) {
    throw configurationError(label, [{ key: "", reason: "give at least one --workdir ALIAS=PATH[:rw]" }]);
  }
  const workdirs = specs.map((text, i) => {
    const parsed = parseWorkdirSpec(text, i, cwd, home);
    if (!parsed.ok && parsed.problem.usage) throw new ServerfsError("USAGE_ERROR", parsed.problem.reason);
    if (!parsed.ok) throw configurationError(label, [parsed.problem]);
    const { alias, path, read_only } = parsed.spec;
    return { alias, path, read_only };
  });
  const namer: KeyNamer = (p) => {
    const [head, index, field] = p;
    if (head === "workdirs" && typeof index === "number") return `#${index + 1}${typeof field === "string" ? `.${field}` : ""}`;
    return p.join(".");
  };
  const doc = { workdirs };
  const registry = passesShapeCheck(doc) ? normalized(doc, namer, label) : await validate(doc, namer, label);
  return { registry, source: { format: "cli", file: null }, keyName: namer };
}

const ALIAS = new RegExp(ALIAS_PATTERN);

/**
 * A `--workdir` document has only string aliases, string paths and boolean read_only flags, so
 * the schema can refuse it for two reasons only: the workdir count and an alias outside the
 * grammar (the same pattern the schema compiles). When neither applies the schema would hand the
 * document back unchanged, and loading it (the largest cost of a `serve` start) is skipped; a
 * refusal still comes from the schema, in its words (test/config/workdir-args.test.ts holds the
 * two to the same verdict).
 */
export function passesShapeCheck(doc: { workdirs: readonly { alias: string }[] }): boolean {
  const n = doc.workdirs.length;
  return n >= 1 && n <= BOUNDS.maxTomlWorkdirs && doc.workdirs.every((w) => ALIAS.test(w.alias));
}

async function validate(raw: unknown, namer: KeyNamer, file: string): Promise<Registry> {
  // Imported here, not at the top: the schema (arktype's core, ~100 ms to import and build) is
  // the dominant cost of loading a config (bench/startup/config-load.ts), and modules that
  // import this file without loading a config must not pay it.
  const { checkRawDocument } = await import("./schema.ts");
  const checked = checkRawDocument(raw);
  if (!checked.ok) {
    const problems = [...checked.problems, ...independentFieldProblems(raw, checked.problems)];
    throw configurationError(file, nameProblems(problems, namer));
  }
  return normalized(checked.doc, namer, file);
}

function normalized(doc: RawDocument, namer: KeyNamer, file: string): Registry {
  const result = normalizeDocument(doc, namer);
  if (!result.ok) throw configurationError(file, nameProblems(result.problems, namer));
  return result.registry;
}

