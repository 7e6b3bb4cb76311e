import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import type { FsToolDeps } from "./service.ts";

export const listWorkdirsInput = z.strictObject({});

export const listWorkdirsOutput = z.object({
  workdirs: z.array(
    z.object({
      alias: z.string(),
      description: z.string().nullable(),
      access: z.enum(["read-only", "read-write"]),
      binary_transfer: z.boolean(),
      agent_mode: z.enum(["disabled", "review", "workspace-write"]),
      agent_runtimes: z.array(z.string()),
    }),
  ),
});

export function listWorkdirsTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "list_workdirs",
    title: "List workdirs",
    description:
      "List the workdirs this server exposes, in configured order: alias, description, access " +
      "(read-only or read-write), whether binary transfer is enabled, and the agent policy. Call this " +
      "first: every other tool takes a workdir alias from this list and a path relative to its root.",
    hints: HINTS.read,
    input: listWorkdirsInput,
    output: listWorkdirsOutput,
    handler: async () => ({ structured: await deps.files.listWorkdirs() }),
    auditResult: (out) => ({ returned: out.workdirs.length }),
  });
}
