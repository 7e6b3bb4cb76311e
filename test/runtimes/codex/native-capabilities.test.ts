// What the three native runtimes advertise, independent of whether the provider packages are
// installed: the capability table (docs/runtimes.md, narrowed to what the e2e suites prove),
// availability from the configured executable, registration only when enabled, and the refusals
// that need no provider at all.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_LIMITS } from "../../../src/config/defaults.ts";
import type { AgentConfig, Registry } from "../../../src/config/types.ts";
import { buildAdapters } from "../../../src/bridge/adapters.ts";
import { ClaudeAdapter } from "../../../src/runtimes/claude/index.ts";
import { parseClaudeVersion } from "../../../src/runtimes/claude/adapter.ts";
import { CodexAdapter } from "../../../src/runtimes/codex/index.ts";
import { parseCodexVersion } from "../../../src/runtimes/codex/adapter.ts";
import { resolveExecutable } from "../../../src/config/executable.ts";
import { QoderAdapter } from "../../../src/runtimes/qoder/index.ts";
import { parseQoderVersion } from "../../../src/runtimes/qoder/adapter.ts";
import type { TaskContext } from "../../../src/runtimes/types.ts";
import { tempDir } from "../../support/temp.ts";
import { RecordingDiagnostics, testAgentConfig } from "../service-rig.ts";

const root = tempDir("serverfs-native-caps-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds" | "provider_env_file"> = {
  proxy: { enabled: false, url: null, no_proxy: ["127.0.0.1", "localhost", "::1"] },
  event_idle_timeout_seconds: null,
  provider_env_file: null,
};
const missing = { enabled: true, bin: path.join(root, "no-such-provider"), use_proxy: false };
const opts = { config: missing, agent, tmpRoot: path.join(root, "tmp"), diagnostics: new RecordingDiagnostics() };

const TABLE = {
  codex: { persistent_session: true, live_steer: true, interactive_approval: true, interactive_question: true, in_flight_recovery: "session-resume", model_override: true, model_discovery: "runtime_catalog" },
  claude: { persistent_session: true, live_steer: false, interactive_approval: true, interactive_question: true, in_flight_recovery: "session-resume", model_override: true, model_discovery: "unsupported" },
  qoder: {
    persistent_session: true,
    live_steer: false,
    interactive_approval: true,
    interactive_question: true,
    in_flight_recovery: "session-resume",
    model_override: true,
    model_discovery: "unsupported",
    capability_state: "unmeasured",
  },
} as const;

describe("native runtime capabilities", () => {
  test("a missing executable: available false, no version, the same capability table", async () => {
    expect(await new CodexAdapter(opts).probe()).toEqual({ name: "codex", available: false, version: null, ...TABLE.codex });
    expect(await new ClaudeAdapter(opts).probe()).toEqual({ name: "claude", available: false, version: null, ...TABLE.claude });
    expect(await new QoderAdapter(opts).probe()).toEqual({ name: "qoder", available: false, version: null, ...TABLE.qoder });
  });

  test("model discovery: codex unavailable without its executable; claude and qoder have none", async () => {
    expect(await new CodexAdapter(opts).listModels()).toMatchObject({ runtime: "codex", status: "unavailable", scope: "none", models: [] });
    expect(await new ClaudeAdapter(opts).listModels()).toMatchObject({ runtime: "claude", status: "unsupported", source: "claude_code", models: [] });
    expect(await new QoderAdapter(opts).listModels()).toMatchObject({ runtime: "qoder", status: "unsupported", models: [] });
  });

  test("an executable that is not executable, a directory, or a relative path is not available", () => {
    const plain = path.join(root, "plain");
    fs.writeFileSync(plain, "#!/bin/sh\n", { mode: 0o644 });
    expect(resolveExecutable(plain)).toBeNull();
    expect(resolveExecutable(root)).toBeNull();
    expect(resolveExecutable("bin/codex")).toBeNull();
    const exe = path.join(root, "mycodex");
    fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    expect(resolveExecutable(exe)).toBe(exe);
    expect(resolveExecutable("mycodex", `relative:${root}`)).toBe(exe);
    expect(resolveExecutable("mycodex", "relative")).toBeNull();
  });

  test("version lines", () => {
    expect(parseCodexVersion("codex-cli 0.169.0")).toBe("0.169.0");
    expect(parseClaudeVersion("2.1.332 (Claude Code)")).toBe("2.1.332");
    expect(parseQoderVersion("1.1.52")).toBe("1.1.52");
    expect(parseCodexVersion("bash: codex: not found")).toBeNull();
    expect(parseClaudeVersion("Usage: claude [options]")).toBeNull();
  });

  test("the Bridge registers a native runtime only when its block is enabled", () => {
    const registry = (enabled: boolean): Registry => ({
      server: { log_level: "ERROR", state_dir: path.join(root, "state") },
      limits: { ...DEFAULT_LIMITS },
      workdirs: [],
      agent: testAgentConfig({ codex: { ...missing, enabled }, claude: { ...missing, enabled }, qoder: { ...missing, enabled }, proxy: agent.proxy }),
    });
    const services = () => ({ loadCapabilities: () => null });
    expect([...buildAdapters(registry(false), services).keys()]).toEqual([]);
    expect([...buildAdapters(registry(true), services).keys()].sort()).toEqual(["claude", "codex", "qoder"]);
  });

  test("native runtimes refuse the review profile before starting anything", async () => {
    let spawned = 0;
    const ctx = {
      taskId: "t1",
      runId: "r1",
      workdir: "repo",
      workdirRoot: root,
      cwd: root,
      relativeCwd: "",
      profile: "review",
      prompt: "x",
      requestedModel: null,
      continueNativeSessionId: null,
      signal: new AbortController().signal,
      spawn: async () => {
        spawned++;
        throw new Error("must not spawn");
      },
    } as unknown as TaskContext;
    for (const adapter of [new CodexAdapter(opts), new ClaudeAdapter(opts), new QoderAdapter(opts)]) {
      expect(await adapter.run(ctx).catch((e: { code: string }) => e.code)).toBe("AGENT_PROFILE_NOT_ALLOWED");
      expect(await adapter.continue!({ ...ctx, profile: "workspace-write" } as TaskContext).catch((e: { code: string }) => e.code)).toBe("AGENT_SESSION_NOT_RESUMABLE");
    }
    expect(spawned).toBe(0);
  });
});
