// What the agent tools are built from: the registry (for MCP-side authorization before any RPC),
// the file service (the starting path goes through the normal path policy) and the Bridge client.
// Every tool is a thin proxy: validate locally where cheap, then one Bridge RPC.
import { z } from "zod";
import { ServerfsError } from "../../../errors.ts";
import type { Registry, TaskProfile } from "../../../config/types.ts";
import type { BridgeClient } from "../../../bridge/ipc/client.ts";
import type { BridgeMethod, Params, Result } from "../../../bridge/rpc/methods.ts";
import type { FileService } from "../../../fs/index.ts";
import { normalizeRequestPath } from "../../../fs/policy.ts";
import { authorizeTask } from "../../../bridge/service/authorize.ts";
import type { ToolHints } from "../../tool.ts";

export interface AgentToolDeps {
  registry: Registry;
  client: Pick<BridgeClient, "call">;
  files: Pick<FileService, "statFile">;
}

/** The agent tools' annotations as listed in docs/tools.md (openWorldHint is set by the helper). */
export const AGENT_HINTS = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  submit: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  respond: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  answer: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  steer: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  cancel: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
} as const satisfies Record<string, ToolHints>;

export const taskIdArg = z.string().min(1).max(64).describe("Task id returned by submit_agent_task (agt_…).");
export const runtimeArg = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/)
  .describe("Runtime id as listed by list_agent_runtimes (e.g. codex, claude, qoder, acp-<profile>).");
export const profileArg = z
  .enum(["review", "workspace-write"])
  .default("workspace-write")
  .describe("review = read-only intent (no writer lease); workspace-write = may change files (holds the workdir's writer lease).");

/** Runtimes allow-listed on at least one workdir: the only ones a caller may see or use. */
export function allowlistedRuntimes(registry: Registry): Set<string> {
  const out = new Set<string>();
  for (const w of registry.workdirs) if (w.agent_mode !== "disabled") for (const r of w.agent_runtimes) out.add(r);
  return out;
}

/**
 * Before any RPC: the Bridge's own authorizeTask (workdir, mode, allowlist, profile rank,
 * writability, runtimes that need workspace-write, the start-path policy), then the file
 * service's stat (must be a directory). Returns the normalised relative path to send.
 */
export async function authorizeSubmit(
  deps: AgentToolDeps,
  a: { workdir: string; runtime: string; profile: TaskProfile; path: string },
): Promise<string> {
  // The Bridge applies the same check itself; refusing here spares the RPC.
  authorizeTask(deps.registry, a, (w) => normalizeRequestPath(w.alias, a.path).join("/"), a.path);
  const st = await deps.files.statFile({ workdir: a.workdir, path: a.path });
  if (st.type !== "directory") throw new ServerfsError("NOT_A_DIRECTORY", `'${a.path.slice(0, 200)}' is not a directory`);
  return st.path === "." ? "" : st.path;
}

/** Bridge errors pass through with their code; anything foreign becomes AGENT_BRIDGE_ERROR. */
export async function rpc<M extends BridgeMethod>(deps: AgentToolDeps, method: M, params: Params<M>, timeoutMs?: number): Promise<Result<M>> {
  try {
    return await deps.client.call(method, params, timeoutMs !== undefined ? { timeoutMs } : {});
  } catch (err) {
    if (err instanceof ServerfsError) throw err;
    throw new ServerfsError("AGENT_BRIDGE_ERROR", "the Agent Bridge call failed");
  }
}

/** `T` with its nullable keys made optional and non-null: what `compact` returns. */
export type Compacted<T> = {
  [K in keyof T as null extends T[K] ? never : undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as null extends T[K] ? K : undefined extends T[K] ? K : never]?: Exclude<T[K], null | undefined>;
};

/** Drop null/undefined optional keys: the RPC omits them rather than sending null. */
export function compact<T extends object>(params: T): Compacted<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) out[k] = v;
  return out as Compacted<T>;
}

export const correlationOut = z.string().nullable();
