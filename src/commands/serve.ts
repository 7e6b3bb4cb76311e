// `serverfs serve`: the MCP server over stdio that an MCP host launches. stdout carries MCP
// frames only; every log line is one JSON object on stderr (src/log.ts). Nothing on this path
// may call console.log.
//
// Start-up order: the configuration is loaded and checked first (a bad one fails here, with its
// code, before anything is read from stdin). Then, when the deployment's tools/list is known from
// the build (src/mcp/opening.ts), the host's opening is answered from it while the server itself
// (the MCP SDK, zod, the tools, the file layer) is not loaded yet; it is loaded once the opening
// is over, and reads everything the opening read. This module imports none of those: the imports
// below are what the opening needs, the rest is imported in `startServer`.
import os from "node:os";
import { osReleaseProblem } from "../../platform/darwin/version.ts";
import { normalJitPolicy } from "../../platform/jit-policy.ts";
import { PLATFORM_NAME } from "../../platform/os.ts";
import { folderWorkdirSpecs } from "../config/folder-workdirs.ts";
import { loadRegistry, registryFromWorkdirArgs } from "../config/load.ts";
import { ServerfsError } from "../errors.ts";
import type { Registry } from "../config/types.ts";
import type { FileService, MutationGate } from "../fs/index.ts";
import { createLogger, type Logger } from "../log.ts";
import { answerOpening } from "../mcp/opening-reader.ts";
import { openingPlan } from "../mcp/opening.ts";
import { StdinRelay } from "../mcp/stdin-relay.ts";
import { StdioLifecycle } from "../mcp/stdio-lifecycle.ts";
import type { StdioSession } from "../mcp/stdio.ts";
import type { McpTool } from "../mcp/tool.ts";
import { VERSION } from "../version.ts";
import { parseArgs } from "./args.ts";
import { SERVE } from "./specs.ts";

type ConfigSource = "config" | "env_file" | "workdir_flags";

export async function main(argv: string[]): Promise<number> {
  // The table (src/commands/specs.ts) checks that exactly one source is given: --config FILE,
  // --env-file FILE, or workdir flags. --config, --workdir-ro and --workdir-rw take zero or more
  // values: an MCP Bundle host passes `--config` with nothing after it when the user picked no
  // file (src/config/folder-workdirs.ts), which counts as not given.
  const args = parseArgs(argv, SERVE);
  const configFile = args.flags.get("config")?.[0];
  const envFile = args.flags.get("env-file")?.[0];
  const explicitSpecs = args.flags.get("workdir") ?? [];
  const workdirSpecs = [
    ...explicitSpecs,
    ...folderWorkdirSpecs(
      { readOnly: args.flags.get("workdir-ro") ?? [], readWrite: args.flags.get("workdir-rw") ?? [] },
      explicitSpecs.map((s) => s.slice(0, Math.max(0, s.indexOf("=")))),
    ),
  ];
  // Before anything is opened: on a kernel too old to enforce the file containment (macOS < 11).
  const osProblem = osReleaseProblem(PLATFORM_NAME, os.release());
  if (osProblem !== null) throw new ServerfsError("PLATFORM_UNSUPPORTED", osProblem);

  const { registry } =
    configFile !== undefined
      ? await loadRegistry({ configFile })
      : envFile !== undefined
        ? await loadRegistry({ envFile })
        : await registryFromWorkdirArgs(workdirSpecs);
  const logger = createLogger({ level: registry.server.log_level });
  const source: ConfigSource = configFile !== undefined ? "config" : envFile !== undefined ? "env_file" : "workdir_flags";

  const plan = openingPlan(registry);
  if (plan === undefined) {
    // The Bridge's tools and writer lease, or limits the build did not list: everything first, as
    // it always was, so that whatever of it fails fails before stdin is read.
    const server = await startServer(registry, logger);
    logStartup(logger, registry, server.toolCount, source);
    const lifecycle = new StdioLifecycle(logger).install();
    return server.serve({ input: new StdinRelay(process.stdin), lifecycle });
  }
  logStartup(logger, registry, plan.toolCount, source);
  const lifecycle = new StdioLifecycle(logger).install();
  const relay = new StdinRelay(process.stdin);
  const opening = answerOpening(relay, plan, process.stdout);
  // A signal or the end of stdin ends the opening: the server comes up to shut down in order.
  lifecycle.onEarlyRequest(() => opening.end());
  await opening.ended;
  let server: StartedServer;
  try {
    server = await startServer(registry, logger);
  } catch (err) {
    // Nothing will read stdin now: let go of it, so the process can exit with the error.
    relay.close();
    throw err;
  }
  return server.serve({ input: relay, lifecycle, answered: opening.answered });
}

interface StartedServer {
  toolCount: number;
  serve: (session: StdioSession) => Promise<never>;
}

/** Load and build the server: the file service, the MCP server and its tools. */
async function startServer(registry: Registry, logger: Logger): Promise<StartedServer> {
  // First: it must run before any zod schema is built (see the module).
  await import("../mcp/zod-jitless.ts");
  const { createFileService, startSearchWorker } = await import("../fs/index.ts");
  // The search thread boots on the core this single-threaded load leaves idle, while the MCP SDK
  // and the tools load here: a host's first search, often the next frame after the opening, then
  // finds it ready instead of waiting for it (src/fs/search/search-pool.ts).
  startSearchWorker();
  const [{ createMcpServer }, { serveOverStdio }] = await Promise.all([import("../mcp/server.ts"), import("../mcp/stdio.ts")]);
  const files = createFileService(registry, { gate: await writerLeaseGate(registry) });
  const mcp = createMcpServer({ registry, files, logger, agentTools: await agentTools(registry, files) });
  return {
    toolCount: mcp.tools.length,
    serve: (session) => {
      // Deferred: the host's initialize must not wait on the root checks (the first check also loads
      // the kernel bindings and probes case sensitivity), nor on a slow or hung mount.
      return serveOverStdio(mcp, logger, session, {
        deferred: () => warnUnusableRoots(logger, registry, files),
        afterFirstAnswer: () => void sweepTemps(logger, files),
        // Start-up, the opening's replay and the first request the host sent after it ran at the
        // executable's start-up JIT policy (platform/jit-policy.ts): much of that request is a
        // first use too. What the server runs from then on, again and again, is optimized as usual.
        afterFirstOwnAnswer: normalJitPolicy,
      });
    },
  };
}

/**
 * Temps that writers killed mid-write left in the read-write workdirs are removed once per start,
 * in a bounded pass after the host's opening is answered (src/fs/temp-sweep.ts); the counts go to
 * the log, never a name.
 */
async function sweepTemps(logger: Logger, files: FileService): Promise<void> {
  const report = await files.sweepTemps();
  logger.info("temp_sweep", { ...report });
}

/**
 * A workdir whose root is missing, a symlink or unreadable stays configured (each call answers
 * with its code), but the operator learns about it at start-up instead of from the assistant.
 */
async function warnUnusableRoots(logger: Logger, registry: Registry, files: FileService): Promise<void> {
  for (const w of registry.workdirs) {
    try {
      await files.statFile({ workdir: w.alias, path: "" });
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      logger.warn("workdir_unavailable", { workdir: w.alias, error_code: typeof code === "string" ? code : "INTERNAL_ERROR" });
    }
  }
}

/**
 * The writer-lease seam. With the Agent Bridge enabled, every mutation from `serve` takes the
 * same cross-process writer lease as agent tasks (WORKDIR_BUSY while a task writes,
 * WORKDIR_RECOVERY_REQUIRED after a crash). Without it the file service's in-process gate is
 * enough. Imported lazily: a deployment without agents does not load the lease machinery.
 */
async function writerLeaseGate(registry: Registry): Promise<MutationGate | undefined> {
  if (!registry.agent.enabled) return undefined;
  const { createLeaseGate } = await import("../bridge/lease-gate.ts");
  return createLeaseGate(registry);
}

/**
 * Registration point for the Agent Bridge tools (src/mcp/tools/agent/). The surface lists them
 * only when the Bridge is enabled and a workdir allows a runtime (src/mcp/surface-plan.ts).
 */
async function agentTools(registry: Registry, files: FileService): Promise<McpTool[]> {
  const { agentSurfaceEnabled } = await import("../mcp/surface-plan.ts");
  if (!agentSurfaceEnabled(registry)) return [];
  const { buildAgentTools } = await import("../mcp/tools/agent/index.ts");
  return buildAgentTools(registry, files);
}

/** The effective security mode, as counts and switches: never a glob, a path or an alias list. */
function logStartup(logger: Logger, registry: Registry, toolCount: number, source: ConfigSource): void {
  const w = registry.workdirs;
  const extraRules = new Set(w.flatMap((d) => d.extra_deny_globs)).size;
  logger.info("startup", {
    version: VERSION,
    transport: "stdio",
    config_source: source,
    workdirs: w.length,
    read_write_workdirs: w.filter((d) => !d.read_only).length,
    binary_transfer_workdirs: w.filter((d) => d.binary_transfer_enabled).length,
    allow_hidden: w.some((d) => d.allow_hidden),
    allow_hidden_workdirs: w.filter((d) => d.allow_hidden).length,
    default_deny_enabled: w.every((d) => !d.disable_default_deny),
    default_deny_disabled_workdirs: w.filter((d) => d.disable_default_deny).length,
    extra_deny_rule_count: extraRules,
    agent_enabled: registry.agent.enabled,
    writer_lease: registry.agent.enabled ? "agent-bridge" : "in-process",
    tools: toolCount,
  });
}
