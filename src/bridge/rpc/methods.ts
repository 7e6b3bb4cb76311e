// The Bridge method table, keyed by method name in the style of the ACP SDK's method-keyed types
// (`AgentRequestParamsByMethod`): for every method, what a caller sends, what a handler receives
// (the same params with the protocol defaults filled in) and what it returns. Server dispatch,
// the client's `call`, the MCP agent tools and `serverfs tasks` are all typed from this one map.
// The contract in prose: docs/design/bridge-rpc.md.
import type { BridgeMethod, WireParams } from "./shapes.ts";
import type {
  BridgeStatusResult,
  CancelResult,
  EventsResult,
  MessageResult,
  ResolvedResult,
  ResultReadResult,
  RuntimeListResult,
  RuntimeModelsResult,
  SubmitResult,
  TaskListResult,
  TaskView,
} from "./results.ts";

export type { BridgeMethod } from "./shapes.ts";

/**
 * Protocol defaults, the only place they are written: the dispatch wrapper fills every absent key
 * listed here before a handler runs. Keys whose absence means something (the approval answer's
 * decision / option_id / granted_permission_ids) have no default on purpose.
 */
export const PROTOCOL_DEFAULTS = {
  "runtime.models": { workdir: null, task_prompt: null, path: "", profile: "workspace-write" },
  "task.submit": { model: null, continue_from_task_id: null, correlation_id: null, idempotency_key: null, config_identity: null },
  "task.get": { wait_seconds: 0 },
  "task.events": { after_event_id: 0, limit: 100 },
  "task.result.read": { offset_bytes: 0, max_bytes: 65_536 },
  "task.list": { limit: 50, status: null },
} as const satisfies { [M in BridgeMethod]?: Partial<Record<keyof WireParams<M>, unknown>> };

type Defaults = typeof PROTOCOL_DEFAULTS;
type Flat<T> = { [K in keyof T]: T[K] };

/** Params after defaults: keys with a default are present (and `status` of task.list may be null). */
type Completed<M extends BridgeMethod> = M extends keyof Defaults
  ? Flat<
      Omit<WireParams<M>, keyof Defaults[M]> & {
        [K in keyof Defaults[M] & keyof WireParams<M>]-?: Exclude<WireParams<M>[K], undefined> | (Defaults[M][K] extends null ? null : never);
      }
    >
  : WireParams<M>;

interface ResultByMethod {
  "runtime.list": RuntimeListResult;
  "runtime.models": RuntimeModelsResult;
  "task.submit": SubmitResult;
  "task.get": TaskView;
  "task.events": EventsResult;
  "task.result.read": ResultReadResult;
  "task.approval.respond": ResolvedResult;
  "task.question.answer": ResolvedResult;
  "task.message.send": MessageResult;
  "task.cancel": CancelResult;
  "task.list": TaskListResult;
  "bridge.status": BridgeStatusResult;
}

export type BridgeMethods = {
  [M in BridgeMethod]: { params: WireParams<M>; handlerParams: Completed<M>; result: ResultByMethod[M] };
};

/** What a caller sends for method M. */
export type Params<M extends BridgeMethod> = BridgeMethods[M]["params"];
/** What a handler of M receives: validated, with every protocol default applied. */
export type HandlerParams<M extends BridgeMethod> = BridgeMethods[M]["handlerParams"];
/** What M returns. */
export type Result<M extends BridgeMethod> = BridgeMethods[M]["result"];

export type * from "./results.ts";
