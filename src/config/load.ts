// The one loader. Every command that needs the deployment calls `loadRegistry` (or, for the
// zero-config `serve --workdir`, `registryFromWorkdirArgs`); all three sources produce the same
// raw document shape and go through the same schema check and the same normalizer, so nothing
// is accepted from one source and refused from another.
import { parseEnvSource } from "./env-source.ts";
import { currentHomeFacts, type HomeFacts } from "./home-path.ts";
import { independentFieldProblems, normalizeDocument } from "./normalize.ts";
import { configurationError, nameProblems, type KeyNamer } from "./problems.ts";
import { documentAllows } from "./schema.generated.ts";
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
  const registry = await validate({ workdirs }, namer, label);
  return { registry, source: { format: "cli", file: null }, keyName: namer };
}

async function validate(raw: unknown, namer: KeyNamer, file: string): Promise<Registry> {
  // The schema's own check, compiled at build time (./schema.generated.ts), answers for a document
  // it accepts; a document that passes comes back from the schema unchanged, so that answer is all
  // a start needs. Only a refusal loads the schema (arktype's core, the dominant cost of loading a
  // config: bench/startup/config-load.ts), to say what is wrong in its words.
  if (allowedWithoutSchema(raw)) return normalized(raw as RawDocument, namer, file);
  const { checkRawDocument } = await import("./schema.ts");
  const checked = checkRawDocument(raw);
  if (!checked.ok) {
    const problems = [...checked.problems, ...independentFieldProblems(raw, checked.problems)];
    throw configurationError(file, nameProblems(problems, namer));
  }
  return normalized(checked.doc, namer, file);
}

/** The compiled check's yes; anything else (a no, or a throw it should never make) asks the schema. */
function allowedWithoutSchema(raw: unknown): boolean {
  try {
    return documentAllows(raw);
  } catch {
    return false;
  }
}

function normalized(doc: RawDocument, namer: KeyNamer, file: string): Registry {
  const result = normalizeDocument(doc, namer);
  if (!result.ok) throw configurationError(file, nameProblems(result.problems, namer));
  return result.registry;
}

