// Claude Code three ways, all against the scripted Messages endpoint through ANTHROPIC_BASE_URL:
// Zed's two ACP adapters (each bundling its own Claude Agent SDK and Claude Code) and serverfs's
// native `claude` runtime (the repository's pinned SDK binary). Claude Code asks before Write and
// Bash by default; its temp files follow CLAUDE_CODE_TMPDIR, not TMPDIR, hence `tmpdir_env`.
import fs from "node:fs";
import path from "node:path";
import { CLAUDE_DIALECT, startMessagesModel } from "../models/messages.ts";
import { baseEnv, type AgentHome, type AgentSpec } from "./types.ts";

function claudeEnv(h: AgentHome, url: string): Record<string, string> {
  const configDir = path.join(h.home, ".claude");
  fs.mkdirSync(configDir, { recursive: true });
  return {
    ...baseEnv(h),
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: "sk-ant-interop",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
  };
}

export const claudeAgentAcp: AgentSpec = {
  name: "claude-agent-acp",
  pkg: "@zed-industries/claude-agent-acp",
  version: "0.23.1",
  source: "cache",
  runtime: { kind: "acp", id: "claude-acp", args: [], tmpdir_env: ["CLAUDE_CODE_TMPDIR"], probe_timeout_seconds: 60 },
  command: (dir) => path.join(dir, "node_modules/.bin/claude-agent-acp"),
  startModel: () => startMessagesModel(CLAUDE_DIALECT),
  configure: claudeEnv,
};

export const claudeCodeAcp: AgentSpec = {
  name: "claude-code-acp",
  pkg: "@zed-industries/claude-code-acp",
  version: "0.16.2",
  source: "cache",
  // It ignores stdin EOF: a short grace before serverfs stops its tree.
  runtime: { kind: "acp", id: "claude-code-acp", args: [], tmpdir_env: ["CLAUDE_CODE_TMPDIR"], probe_timeout_seconds: 60, shutdown_timeout_seconds: 2 },
  command: (dir) => path.join(dir, "node_modules/.bin/claude-code-acp"),
  startModel: () => startMessagesModel(CLAUDE_DIALECT),
  configure: claudeEnv,
};

export const claudeNative: AgentSpec = {
  name: "claude",
  pkg: "@anthropic-ai/claude-agent-sdk",
  version: "0.3.332",
  source: "dev",
  runtime: { kind: "claude" },
  command: (repo) => path.join(repo, "node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude"),
  startModel: () => startMessagesModel(CLAUDE_DIALECT),
  configure: claudeEnv,
};
