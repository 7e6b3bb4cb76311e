// OpenCode over ACP: its whole config inline in OPENCODE_CONFIG_CONTENT, an OpenAI-compatible
// provider at the scripted Chat Completions endpoint, and `permission: ask` so it asks before it
// edits or runs a command (its default allows both).
import path from "node:path";
import { OPENCODE_DIALECT, startChatModel } from "../models/chat.ts";
import { baseEnv, type AgentSpec } from "./types.ts";

export const opencode: AgentSpec = {
  name: "opencode",
  pkg: "opencode-ai",
  version: "1.18.33",
  source: "cache",
  runtime: { kind: "acp", id: "opencode", args: ["acp"], probe_timeout_seconds: 60 },
  // The npm wrapper spawnSyncs the platform binary; run the binary itself.
  command: (dir) => path.join(dir, "node_modules/opencode-linux-x64/bin/opencode"),
  // opencode-ai@1.18.33 names opencode-windows-x64@1.18.33, which npm does not have (its newest
  // is 1.18.32): the Windows row runs the newest published Windows build.
  // Its shell tool prefers pwsh, then powershell.exe, before COMSPEC; Wine 8.0's powershell.exe is
  // a stub that runs nothing and exits 0, so the operator names cmd.exe through SHELL.
  windows: {
    pkg: "opencode-windows-x64",
    version: "1.18.32",
    exe: "bin/opencode.exe",
    note: "opencode-windows-x64@1.18.33 is not on npm; SHELL=cmd.exe, as Wine's powershell.exe is a stub",
    env: { SHELL: "C:\\windows\\system32\\cmd.exe" },
  },
  startModel: () => startChatModel(OPENCODE_DIALECT),
  configure(h, url) {
    const config = {
      provider: { fake: { npm: "@ai-sdk/openai-compatible", name: "Fake", options: { baseURL: `${url}/v1`, apiKey: "fake-key" }, models: { "fake-model": { name: "Fake Model", tool_call: true, limit: { context: 128000, output: 4096 } } } } },
      model: "fake/fake-model",
      small_model: "fake/fake-model",
      autoupdate: false,
      share: "disabled",
      permission: { edit: "ask", bash: "ask" },
    };
    return {
      ...baseEnv(h),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    };
  },
};
