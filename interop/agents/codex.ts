// Codex two ways, both against the scripted Responses endpoint through a custom model provider in
// a private CODEX_HOME: serverfs's native `codex` runtime (the repository's pinned @openai/codex
// binary) and Zed's codex-acp over ACP. File writes are issued as `printf | tee` commands; an
// exec-policy rule makes `tee` ask (native codex runs workspace commands in its sandbox without
// asking), and codex-acp asks for every untrusted command with approval_policy = "untrusted".
import fs from "node:fs";
import path from "node:path";
import { CODEX_DIALECT, startResponsesModel } from "../models/responses.ts";
import { baseEnv, type AgentHome, type AgentSpec } from "./types.ts";

function codexHome(h: AgentHome, url: string, extra: string[]): Record<string, string> {
  const dir = path.join(h.home, ".codex");
  fs.mkdirSync(path.join(dir, "rules"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "config.toml"),
    [
      'model = "gpt-5.5"',
      'model_provider = "fake"',
      ...extra,
      "check_for_update_on_startup = false",
      "suppress_unstable_features_warning = true",
      "[model_providers.fake]",
      'name = "Fake"',
      `base_url = "${url}/v1"`,
      'env_key = "FAKE_API_KEY"',
      'wire_api = "responses"',
      "[analytics]",
      "enabled = false",
      "",
    ].join("\n"),
  );
  fs.writeFileSync(path.join(dir, "rules", "default.rules"), 'prefix_rule(pattern = ["tee"], decision = "prompt")\n');
  return { ...baseEnv(h), CODEX_HOME: dir, FAKE_API_KEY: "fake-key" };
}

export const codexNative: AgentSpec = {
  name: "codex",
  pkg: "@openai/codex",
  version: "0.169.0",
  source: "dev",
  runtime: { kind: "codex" },
  command: (repo) => path.join(repo, "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"),
  startModel: () => startResponsesModel(CODEX_DIALECT),
  // serverfs pins the approval policy, not the sandbox: the operator chooses workspace-write.
  configure: (h, url) => codexHome(h, url, ['sandbox_mode = "workspace-write"']),
};

export const codexAcp: AgentSpec = {
  name: "codex-acp",
  pkg: "@zed-industries/codex-acp",
  version: "0.16.0",
  source: "cache",
  // It ignores stdin EOF: a short grace before serverfs stops its tree.
  runtime: { kind: "acp", id: "codex-acp", args: [], shutdown_timeout_seconds: 2 },
  // The npm wrapper spawnSyncs the platform binary; run the binary itself.
  command: (dir) => path.join(dir, "node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp"),
  windows: {
    pkg: "@zed-industries/codex-acp-win32-x64",
    version: "0.16.0",
    exe: "bin/codex-acp.exe",
    wineLimits: Object.fromEntries(
      (["allow", "cancel"] as const).map((s) => [s, "Codex's Windows build runs its shell tool (shell_command) through PowerShell, and Wine 8.0's powershell.exe is a stub that runs nothing and exits 0"]),
    ),
  },
  startModel: () => startResponsesModel(CODEX_DIALECT),
  configure: (h, url) => codexHome(h, url, ['approval_policy = "untrusted"', 'sandbox_mode = "workspace-write"']),
};
