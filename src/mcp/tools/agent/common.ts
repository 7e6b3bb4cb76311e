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
import { checkStartPath } from "../../../bridge/submit.ts";
import type { ToolHints } from "../../tool.ts";

export interface AgentToolDeps {
  registry: Registry;
  client: Pick<BridgeClient, "call">;
  files: Pick<FileService, "statFile">;
}

/** Annotation rows of the agent tools (docs/tools.md; openWorldHint is set by the helper). */
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

const RANK: Record<string, number> = { disabled: 0, review: 1, "workspace-write": 2 };

function requiresWorkspaceWrite(runtime: string): boolean {
  return runtime === "codex" || runtime === "claude" || runtime === "qoder" || runtime.startsWith("acp-");
}

/**
 * The MCP-side checks (docs/agent-bridge.md), in order, before any RPC: workdir, mode, allowlist, profile rank, runtimes
 * that need workspace-write, then the starting path through the same start-path policy the Bridge
 * applies and the file service's stat (must be a directory). Returns the normalised relative path to send.
 */
export async function authorizeSubmit(
  deps: AgentToolDeps,
  a: { workdir: string; runtime: string; profile: TaskProfile; path: string },
): Promise<string> {
  const w = deps.registry.workdirs.find((x) => x.alias === a.workdir);
  if (!w) throw new ServerfsError("WORKDIR_NOT_FOUND", `workdir '${a.workdir.slice(0, 64)}' is not configured`);
  if (w.agent_mode === "disabled") throw new ServerfsError("AGENT_DISABLED", `agent tasks are disabled on workdir ${w.alias}`);
  if (!w.agent_runtimes.includes(a.runtime)) {
    throw new ServerfsError("AGENT_RUNTIME_NOT_ALLOWED", `runtime '${a.runtime}' is not allowed on workdir ${w.alias}`);
  }
  if (RANK[a.profile]! > RANK[w.agent_mode]!) {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `profile ${a.profile} exceeds workdir ${w.alias}'s agent mode`);
  }
  if (requiresWorkspaceWrite(a.runtime) && a.profile !== "workspace-write") {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `runtime ${a.runtime} requires the workspace-write profile`);
  }
  // The Bridge applies the same check itself; refusing here spares the RPC and keeps the two in step.
  checkStartPath(w, normalizeRequestPath(w.alias, a.path).join("/"), a.path);
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
