// GitHub Copilot CLI over ACP in BYOK mode: COPILOT_PROVIDER_BASE_URL switches it to a custom
// OpenAI-compatible provider (here the scripted Chat Completions wire) and no GitHub login is
// needed; COPILOT_OFFLINE=1 stops its update and telemetry calls. It unpacks ~235 MB into its
// package cache on the first start, so the cache is kept outside the per-run HOME.
import path from "node:path";
import { startChatModel } from "../models/chat.ts";
import type { Dialect } from "../models/script.ts";
import { cacheRoot } from "../install.ts";
import { baseEnv, type AgentSpec } from "./types.ts";

export const COPILOT_DIALECT: Dialect = {
  write: (file, content) => ({ tool: "create", args: { path: file, file_text: content } }),
  shell: (command) => ({ tool: "bash", args: { command, description: "run a command", mode: "sync", initial_wait: 600 } }),
};

export const copilot: AgentSpec = {
  name: "copilot",
  pkg: "@github/copilot",
  version: "1.0.102",
  source: "cache",
  runtime: { kind: "acp", id: "copilot", args: ["--acp"], probe_timeout_seconds: 120 },
  // The npm wrapper spawnSyncs the platform binary; run the binary itself.
  command: (dir) => path.join(dir, "node_modules/@github/copilot-linux-x64/copilot"),
  windows: {
    pkg: "@github/copilot-win32-x64",
    version: "1.0.102",
    exe: "copilot.exe",
    wineLimits: Object.fromEntries(
      (["text", "allow", "reject", "cancel", "continue"] as const).map((s) => [s, "copilot.exe's V8 aborts at start under Wine 8.0 (even `copilot.exe --version`: \"Fatal process out of memory: SegmentedTable::InitializeTable (subspace allocation)\"), so it never answers initialize"]),
    ),
  },
  startModel: () => startChatModel(COPILOT_DIALECT),
  configure: (h, url) => ({
    ...baseEnv(h),
    COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_PROVIDER_API_KEY: "fake-key",
    COPILOT_MODEL: "fake-model",
    COPILOT_OFFLINE: "1",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_PKG_CACHE_HOME: path.join(cacheRoot(), "copilot-pkg-cache"),
  }),
};
