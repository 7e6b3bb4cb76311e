// Gemini CLI over ACP (`--acp`): GOOGLE_GEMINI_BASE_URL points its API client at the scripted Gemini
// wire (it then selects the "gateway" auth type; GEMINI_API_KEY is still required), and
// ~/.gemini/settings.json keeps the default approval mode, turns telemetry and session retention
// off (retention deletes a session's files once session/load has created an empty duplicate).
import fs from "node:fs";
import path from "node:path";
import { startGeminiModel } from "../models/gemini.ts";
import type { Dialect } from "../models/script.ts";
import { baseEnv, type AgentSpec } from "./types.ts";

const GEMINI_DIALECT: Dialect = {
  write: (file_path, content) => ({ tool: "write_file", args: { file_path, content } }),
  shell: (command) => ({ tool: "run_shell_command", args: { command, description: "run a command" } }),
};

export const gemini: AgentSpec = {
  name: "gemini",
  pkg: "@google/gemini-cli",
  version: "0.61.0",
  source: "cache",
  runtime: { kind: "acp", id: "gemini", args: ["--acp"], probe_timeout_seconds: 60 },
  command: (dir) => path.join(dir, "node_modules/.bin/gemini"),
  startModel: () => startGeminiModel(GEMINI_DIALECT),
  // Its session/load fails when the load happens in the clock minute the session was created in.
  continuationNeedsNewMinute: true,
  configure(h, url) {
    const dir = path.join(h.home, ".gemini");
    fs.mkdirSync(dir, { recursive: true });
    const settings = {
      general: { sessionRetention: { enabled: false }, disableAutoUpdate: true, disableUpdateNag: true },
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
      model: { name: "gemini-2.5-flash" },
    };
    fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings));
    return { ...baseEnv(h), GEMINI_API_KEY: "fake-key", GOOGLE_GEMINI_BASE_URL: url, GEMINI_CLI_NO_RELAUNCH: "true" };
  },
};
