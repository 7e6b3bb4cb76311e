// `serverfs serve`: the MCP server over stdio that an MCP host launches. stdout carries MCP
// frames only; every log line is one JSON object on stderr (src/log.ts). Nothing on this path
// may call console.log.
import { loadRegistry, registryFromWorkdirArgs } from "../config/load.ts";
import type { Registry } from "../config/types.ts";
import { createFileService } from "../fs/index.ts";
import { createLogger, type Logger } from "../log.ts";
import { createMcpServer } from "../mcp/server.ts";
import { serveOverStdio } from "../mcp/stdio.ts";
import type { McpTool } from "../mcp/tool.ts";
import { VERSION } from "../version.ts";
import { flag, parseArgs, usage } from "./args.ts";

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { config: { value: true }, workdir: { value: true, repeat: true } });
  if (args.positionals.length > 0) throw usage(`unexpected argument '${args.positionals[0]}'`);
  const configFile = flag(args, "config");
  const workdirSpecs = args.flags.get("workdir") ?? [];
  if (configFile !== undefined && workdirSpecs.length > 0) throw usage("give either --config FILE or --workdir, not both");
  if (configFile === undefined && workdirSpecs.length === 0) {
    throw usage("serve needs --config FILE or at least one --workdir ALIAS=PATH[:rw]");
  }

  const { registry } =
    configFile !== undefined ? await loadRegistry({ configFile }) : await registryFromWorkdirArgs(workdirSpecs);
  const logger = createLogger({ level: registry.server.log_level });

  const files = createFileService(registry, writerLeaseGate(registry, logger));
  const mcp = createMcpServer({ registry, files, logger, agentTools: agentTools(registry) });
  logStartup(logger, registry, mcp.tools.length, configFile !== undefined ? "config" : "workdir_flags");
  return serveOverStdio(mcp, logger);
}

/**
 * The writer-lease seam. When the Agent Bridge is enabled, file mutations from `serve` must take
 * the same cross-process writer lease as agent tasks (WORKDIR_BUSY while a task writes). The
 * Bridge engineer's `createLeaseGate(registry)` (src/bridge/lease-gate.ts) plugs in here; until
 * then the file service's default in-process gate is used and the startup log says so.
 */
function writerLeaseGate(registry: Registry, logger: Logger): Parameters<typeof createFileService>[1] {
  if (registry.agent.enabled) logger.warn("writer_lease_unavailable", { reason: "lease gate not wired" });
  return {};
}

/**
 * Registration point for the Agent Bridge tools (src/mcp/tools/agent/). The surface lists them
 * only when the Bridge is enabled and a workdir allows a runtime (src/mcp/surface.ts).
 */
function agentTools(_registry: Registry): McpTool[] {
  return [];
}

/** The effective security mode, as counts and switches: never a glob, a path or an alias list. */
function logStartup(logger: Logger, registry: Registry, toolCount: number, source: string): void {
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
    tools: toolCount,
  });
}
