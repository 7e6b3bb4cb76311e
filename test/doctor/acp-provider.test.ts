// `serverfs doctor` says, per ACP profile, whether a model and provider environment are configured
// where that can be seen without launching the agent: a model in the profile's args, model and
// provider-looking keys of the provider env file (names only, never values) and of doctor's own
// environment; "unknown" where nothing can be seen. Nothing is launched.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { acpFingerprint } from "../../src/config/fingerprint.ts";
import type { AcpProfile } from "../../src/config/types.ts";
import { acpProviderCheck, modelFromArgs } from "../../src/doctor/checks/acp-provider.ts";
import { cleanupTempDirs } from "../support/temp.ts";
import { BUN } from "../support/proc.ts";
import { ACP_FIXTURES, makeDeployment, runDoctor } from "./helpers.ts";

afterAll(cleanupTempDirs);

const q = (s: string) => JSON.stringify(s);
const LOOKS_LIKE_PROVIDER = /(_API_KEY|_AUTH_TOKEN|_API_TOKEN|_ACCESS_TOKEN|_BASE_URL|_API_BASE|_ENDPOINT|_MODEL)$|^(GOOGLE_APPLICATION_CREDENTIALS|AWS_ACCESS_KEY_ID|AWS_PROFILE|AWS_BEARER_TOKEN_BEDROCK)$/;

/** This process's environment with every model/provider-looking variable blanked (an empty one configures nothing). */
function quietEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of Object.keys(process.env)) if (LOOKS_LIKE_PROVIDER.test(k)) env[k] = "";
  return { ...env, ...extra };
}

function profile(args: string[]): AcpProfile {
  return { id: "x", runtime: "acp-x", command: BUN, args, use_proxy: false, probe_timeout_seconds: 5, shutdown_timeout_seconds: 1, fingerprint: acpFingerprint({ id: "x", command: BUN, args, use_proxy: false }) };
}

describe("doctor: ACP model and provider", () => {
  test("through the real binary: the model from args, provider env file keys by name, never a value; another profile is unknown", async () => {
    const agent = path.join(ACP_FIXTURES, "scripted-agent.ts");
    const d = makeDeployment({
      tail:
        `[[agent.acp_profiles]]\nid = "picked"\ncommand = ${q(BUN)}\nargs = [${q(agent)}, "--model", "anthropic/claude-sonnet-4"]\n` +
        `[[agent.acp_profiles]]\nid = "bare"\ncommand = ${q(BUN)}\nargs = [${q(agent)}]\n`,
    });
    const envFile = path.join(d.root, "provider.env");
    fs.writeFileSync(envFile, "OPENAI_API_KEY=sk-do-not-print-me-123\nOPENAI_BASE_URL=https://llm.example/v1\nHOME_NOTE=unrelated\n", { mode: 0o600 });
    fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace("[agent]\n", `[agent]\nprovider_env_file = ${q(envFile)}\n`));

    const r = await runDoctor(d, [], quietEnv({ SFS_TEST_MODEL: "m-from-shell" }));
    expect(r.line("acp picked model and provider")).toBe(
      "acp picked model and provider: OK -- model: anthropic/claude-sonnet-4 (from args); provider environment: OPENAI_API_KEY (provider env file), OPENAI_BASE_URL (provider env file) (not launched)",
    );
    expect(r.line("acp bare model and provider")).toBe(
      "acp bare model and provider: OK -- model: set by SFS_TEST_MODEL (doctor's environment); provider environment: OPENAI_API_KEY (provider env file), OPENAI_BASE_URL (provider env file); doctor's environment reaches the agent only when the Bridge is started from this shell (not launched)",
    );
    expect(r.stdout).not.toContain("sk-do-not-print-me-123");
    expect(r.stdout).not.toContain("m-from-shell");
    expect(r.stdout).not.toContain("HOME_NOTE");

    // Without the env file and without any such variable: unknown, said as such.
    fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace(`provider_env_file = ${q(envFile)}\n`, ""));
    const bare = await runDoctor(d, [], quietEnv());
    expect(bare.line("acp bare model and provider")).toBe(
      "acp bare model and provider: OK -- model: unknown (none in args or the provider env; the agent's own settings decide); provider environment: unknown (no *_API_KEY, *_AUTH_TOKEN or *_BASE_URL variable seen; the agent may use its own login or settings) (not launched)",
    );
  });

  test("model flags agents take: --model X, --model=X, -m X, -c model=X; a flag without a value is not a model", () => {
    expect(modelFromArgs(["acp", "--model", "gpt-5"])).toBe("gpt-5");
    expect(modelFromArgs(["--model=qwen3-coder"])).toBe("qwen3-coder");
    expect(modelFromArgs(["--acp", "-m", "gemini-2.5-pro"])).toBe("gemini-2.5-pro");
    expect(modelFromArgs(["-c", 'model="o3"'])).toBe("o3");
    expect(modelFromArgs(["--config=model=gpt-5-codex"])).toBe("gpt-5-codex");
    expect(modelFromArgs(["-c", "sandbox_mode=read-only"])).toBeNull();
    expect(modelFromArgs(["--model"])).toBeNull();
    expect(modelFromArgs(["--model", "--acp"])).toBeNull();
    expect(modelFromArgs(["acp"])).toBeNull();
  });

  test("an unreadable provider env file is said; keys seen only in doctor's environment carry the caveat", () => {
    const c = acpProviderCheck(profile(["acp"]), { file: "unreadable", own: ["ANTHROPIC_API_KEY", "PATH"] });
    expect(c).toEqual({
      id: "acp.x.provider",
      label: "acp x model and provider",
      status: "OK",
      detail:
        "model: unknown (none in args or the provider env; the agent's own settings decide); provider environment: ANTHROPIC_API_KEY (doctor's environment); the provider env file could not be read; doctor's environment reaches the agent only when the Bridge is started from this shell (not launched)",
    });
  });
});
