// The one declaration of every Bridge RPC method's parameters: the runtime validator walks this
// data and the TypeScript parameter types are derived from it, so the two cannot disagree. The
// checker is hand-written on purpose: it runs on every request and must not pull a schema library
// onto the hot path. JSON types are strict: a JSON bool is never an int, a float is never an int.
// The contract in prose: docs/design/bridge-rpc.md.
import { ServerfsError } from "../../errors.ts";

export type ParamType = "string" | "int" | "string?" | "string[]" | "array" | "bool";

export interface MethodShape {
  readonly required: Readonly<Record<string, ParamType>>;
  readonly optional: Readonly<Record<string, ParamType>>;
}

export const METHOD_SHAPES = {
  "runtime.list": { required: {}, optional: {} },
  "runtime.models": {
    required: { runtime: "string" },
    optional: { workdir: "string?", task_prompt: "string?", path: "string", profile: "string" },
  },
  "task.submit": {
    required: { runtime: "string", workdir: "string", path: "string", profile: "string", prompt: "string" },
    optional: {
      model: "string?",
      continue_from_task_id: "string?",
      correlation_id: "string?",
      idempotency_key: "string?",
      // Additive: the caller's configuration identity (src/config/bridge-identity.ts); a Bridge
      // running another one refuses with AGENT_BRIDGE_CONFIG_STALE.
      config_identity: "string?",
    },
  },
  // wait_seconds is an additive long-poll: return when status/pending interaction changes or time is up.
  "task.get": { required: { task_id: "string" }, optional: { wait_seconds: "int" } },
  "task.events": { required: { task_id: "string" }, optional: { after_event_id: "int", limit: "int" } },
  "task.result.read": { required: { task_id: "string" }, optional: { offset_bytes: "int", max_bytes: "int" } },
  // decision became optional additively: an approval offering response_options is answered by option_id.
  "task.approval.respond": {
    required: { task_id: "string", request_id: "string" },
    optional: { decision: "string", option_id: "string", granted_permission_ids: "string[]", decided_by: "string" },
  },
  // decided_by (additive): who answered — "assistant" (MCP tools), "human" (MCP elicitation), "operator" (serverfs tasks).
  // action (additive): "accept" (the default), "decline" or "cancel" - only a form question from an ACP agent takes the last two.
  "task.question.answer": { required: { task_id: "string", request_id: "string", answers: "array" }, optional: { decided_by: "string", action: "string" } },
  "task.message.send": { required: { task_id: "string", message: "string" }, optional: {} },
  "task.cancel": { required: { task_id: "string" }, optional: {} },
  // Operator-only additions (serverfs tasks / service status); additive to protocol v1.
  "task.list": { required: {}, optional: { limit: "int", status: "string" } },
  "bridge.status": { required: {}, optional: {} },
} as const satisfies Record<string, MethodShape>;

export type BridgeMethod = keyof typeof METHOD_SHAPES;

type TypeOf<T> = T extends "string"
  ? string
  : T extends "string?"
    ? string | null
    : T extends "int"
      ? number
      : T extends "bool"
        ? boolean
        : T extends "string[]"
          ? string[]
          : unknown[];

type Flat<T> = { [K in keyof T]: T[K] };
type Shape<M extends BridgeMethod> = (typeof METHOD_SHAPES)[M];

/** What a caller may send for `M`: required keys, and optional keys it may omit. */
export type WireParams<M extends BridgeMethod> = Flat<
  { -readonly [K in keyof Shape<M>["required"]]: TypeOf<Shape<M>["required"][K]> } & {
    -readonly [K in keyof Shape<M>["optional"]]?: TypeOf<Shape<M>["optional"][K]>;
  }
>;

function matches(type: ParamType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "string?":
      return value === null || typeof value === "string";
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value);
    case "bool":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
  }
}

/** Own keys only: `toString`, `constructor`, `__proto__` are not methods. */
export function isBridgeMethod(method: string): method is BridgeMethod {
  return Object.hasOwn(METHOD_SHAPES, method);
}

/** The shape of a known method, or null. */
export function methodShape(method: string): MethodShape | null {
  return isBridgeMethod(method) ? METHOD_SHAPES[method] : null;
}

/**
 * Throws METHOD_NOT_FOUND for an unknown method and INVALID_REQUEST naming the offending key. Every
 * lookup is an own-property check, so an inherited name (`hasOwnProperty`) or a JSON `"__proto__"`
 * key (which JSON.parse makes an own key, not a prototype) is just an unknown parameter.
 */
export function checkParams(method: string, params: Record<string, unknown>): asserts method is BridgeMethod {
  const shape = methodShape(method);
  if (!shape) throw new ServerfsError("METHOD_NOT_FOUND", `unknown method '${method.slice(0, 64)}'`);
  for (const key of Object.keys(params)) {
    if (!Object.hasOwn(shape.required, key) && !Object.hasOwn(shape.optional, key)) {
      throw new ServerfsError("INVALID_REQUEST", `unknown parameter '${key.slice(0, 64)}' for ${method}`);
    }
  }
  for (const [key, type] of Object.entries(shape.required)) {
    if (!Object.hasOwn(params, key)) throw new ServerfsError("INVALID_REQUEST", `missing parameter '${key}' for ${method}`);
    if (!matches(type, params[key])) throw new ServerfsError("INVALID_REQUEST", `parameter '${key}' has the wrong type`);
  }
  for (const [key, type] of Object.entries(shape.optional)) {
    if (Object.hasOwn(params, key) && !matches(type, params[key])) {
      throw new ServerfsError("INVALID_REQUEST", `parameter '${key}' has the wrong type`);
    }
  }
}
