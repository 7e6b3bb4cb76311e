// Whether an ACP profile has a model and provider credentials configured, as far as that can be
// seen without launching the agent: a model named in the profile's args (`--model X`, `-m X`,
// `--model=X`, `-c model=X`), and variables that look like a model or a provider's key or endpoint
// in what the agent's environment is built from — the provider env file (only its key names are
// read; values are credentials and are never shown) and doctor's own environment, which is the
// Bridge's only when the Bridge is started from the same shell. Anything else (the agent's own
// settings file or login) cannot be seen from here, so the answer says "unknown", not "none".
import type { AcpProfile, Registry } from "../../config/types.ts";
import { readProviderEnvFile } from "../../runtimes/kernel/provider-env.ts";
import { scrubEnv } from "../../../platform/index.ts";
import { ok, type CheckResult } from "../types.ts";

/** Credentials and endpoints: OPENAI_API_KEY, ANTHROPIC_AUTH_TOKEN, OPENAI_BASE_URL, … */
const PROVIDER_KEY = /^[A-Z][A-Z0-9_]*_(API_KEY|AUTH_TOKEN|API_TOKEN|ACCESS_TOKEN|BASE_URL|API_BASE|ENDPOINT)$/;
const PROVIDER_NAMES = new Set(["GOOGLE_APPLICATION_CREDENTIALS", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"]);
/** A model chosen by environment: ANTHROPIC_MODEL, OPENAI_MODEL, GEMINI_MODEL, … */
const MODEL_KEY = /^[A-Z][A-Z0-9_]*_MODEL$/;
const MODEL_FLAGS = new Set(["--model", "-m"]);
const CONFIG_FLAGS = new Set(["-c", "--config"]);
const MAX_NAMED = 8;
const MAX_MODEL_CHARS = 128;

export type EnvKeys = { file: string[] | "unreadable" | null; own: string[] };

/** The key names an agent's environment is built from (never a value). */
export function providerEnvKeys(registry: Registry, base: Record<string, string | undefined> = process.env): EnvKeys {
  // An empty variable configures nothing.
  const set = (env: Record<string, string | undefined>) => Object.keys(env).filter((k) => (env[k] ?? "") !== "");
  const own = set(scrubEnv(base));
  const path = registry.agent.provider_env_file;
  if (path === null) return { file: null, own };
  try {
    return { file: set(readProviderEnvFile(path)), own };
  } catch {
    // state.provider_env_file says why; the Bridge would not start with it
    return { file: "unreadable", own };
  }
}

/** A model the profile's argv chooses, or null. */
export function modelFromArgs(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : null;
    if (MODEL_FLAGS.has(flag)) return printable(inline ?? args[i + 1] ?? "");
    if (CONFIG_FLAGS.has(flag)) {
      const setting = inline ?? args[i + 1] ?? "";
      const m = /^model\s*=\s*(.+)$/.exec(setting);
      if (m) return printable(m[1]!.replace(/^["']|["']$/g, ""));
    }
  }
  return null;
}

function printable(value: string): string | null {
  const clean = value.replace(/[^\x20-\x7e]/g, "?").trim();
  if (clean === "" || clean.startsWith("-")) return null;
  return clean.length > MAX_MODEL_CHARS ? `${clean.slice(0, MAX_MODEL_CHARS)}…` : clean;
}

function named(keys: string[], where: string): string[] {
  return [...new Set(keys)].sort().map((k) => `${k} (${where})`);
}

function list(items: string[]): string {
  return items.length <= MAX_NAMED ? items.join(", ") : `${items.slice(0, MAX_NAMED).join(", ")} and ${items.length - MAX_NAMED} more`;
}

export function acpProviderCheck(profile: AcpProfile, keys: EnvKeys): CheckResult {
  const id = `acp.${profile.id}.provider`;
  const label = `acp ${profile.id} model and provider`;
  const fileKeys = Array.isArray(keys.file) ? keys.file : [];
  const isProvider = (k: string) => PROVIDER_KEY.test(k) || PROVIDER_NAMES.has(k);
  const fromFile = (test: (k: string) => boolean) => named(fileKeys.filter(test), "provider env file");
  const fromOwn = (test: (k: string) => boolean) => named(keys.own.filter((k) => test(k) && !fileKeys.includes(k)), "doctor's environment");

  const argModel = modelFromArgs(profile.args);
  const envModels = [...fromFile((k) => MODEL_KEY.test(k)), ...fromOwn((k) => MODEL_KEY.test(k))];
  const model =
    argModel !== null
      ? `${argModel} (from args)`
      : envModels.length > 0
        ? `set by ${list(envModels)}`
        : "unknown (none in args or the provider env; the agent's own settings decide)";

  const providers = [...fromFile(isProvider), ...fromOwn(isProvider)];
  const provider =
    providers.length > 0
      ? list(providers)
      : "unknown (no *_API_KEY, *_AUTH_TOKEN or *_BASE_URL variable seen; the agent may use its own login or settings)";

  const notes: string[] = [];
  if (keys.file === "unreadable") notes.push("the provider env file could not be read");
  const shown = argModel === null ? [...providers, ...envModels] : providers;
  if (shown.some((p) => p.endsWith("(doctor's environment)"))) {
    notes.push("doctor's environment reaches the agent only when the Bridge is started from this shell");
  }
  return ok(id, label, `model: ${model}; provider environment: ${provider}${notes.length > 0 ? `; ${notes.join("; ")}` : ""} (not launched)`);
}
