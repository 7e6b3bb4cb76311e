// What this Bridge can run: the runtime list (each adapter's probe) and a runtime's models, with
// the optional advice mode that authorizes the would-be task first (docs/agent-bridge.md).
import { ServerfsError, toServerfsError } from "../../errors.ts";
import type { RuntimeInfo } from "../../config/runtime-info.ts";
import { utf8Bytes } from "../../common/utf8.ts";
import { normalizeRelativePath, parseProfile } from "./admission.ts";
import { authorize } from "./authorize.ts";
import type { Result } from "../rpc/methods.ts";
import type { ServiceCore } from "./core.ts";

export interface RuntimeModelsParams {
  runtime: string;
  workdir?: string | null;
  task_prompt?: string | null;
  path?: string;
  profile?: string;
}

export async function listRuntimes(core: ServiceCore): Promise<RuntimeInfo[]> {
  const out: RuntimeInfo[] = [];
  for (const [name, adapter] of core.deps.adapters) {
    try {
      out.push(core.hostRedactor.payload(await adapter.probe()) as RuntimeInfo);
    } catch {
      out.push({ name, available: false } as RuntimeInfo);
    }
  }
  return out;
}

export async function runtimeModels(core: ServiceCore, params: RuntimeModelsParams): Promise<Result<"runtime.models">> {
  const runtime = params.runtime;
  const adapter = core.deps.adapters.get(runtime);
  if (!adapter) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `runtime '${runtime.slice(0, 64)}' is not available`);
  const advice =
    (params.workdir !== undefined && params.workdir !== null) ||
    (params.task_prompt !== undefined && params.task_prompt !== null) ||
    (params.path !== undefined && params.path !== "") ||
    (params.profile !== undefined && params.profile !== "workspace-write");
  if (advice) {
    if (typeof params.workdir !== "string" || typeof params.task_prompt !== "string") {
      throw new ServerfsError("INVALID_REQUEST", "advice mode needs both workdir and task_prompt");
    }
    const profile = parseProfile(params.profile ?? "workspace-write", "unknown profile");
    if (utf8Bytes(params.task_prompt) > core.limits.max_prompt_bytes) throw new ServerfsError("AGENT_PROMPT_TOO_LARGE", "task_prompt is too large");
    authorize(core.deps.registry, runtime, params.workdir, profile, normalizeRelativePath(params.path ?? ""));
  }
  let result: Result<"runtime.models">;
  if (!adapter.listModels) {
    result = { runtime, status: "unsupported", scope: "none", source: runtime, models: [] };
  } else {
    try {
      // The adapter's own catalog report, passed through (RuntimeAdapter.listModels is untyped).
      result = (await adapter.listModels()) as Result<"runtime.models">;
    } catch (err) {
      result = { runtime, status: "unavailable", scope: "none", source: runtime, models: [], detail: toServerfsError(err).code };
    }
  }
  result = core.hostRedactor.payload(result) as Result<"runtime.models">;
  if (advice) result.model_advice = { status: "disabled", automatic: false };
  return result;
}
