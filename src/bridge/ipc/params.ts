// Exact parameter shapes per RPC method: required and optional key sets with strict JSON types
// (a JSON bool is never an int, a float is never an int). Hand-written on purpose: this runs on
// every request and must not pull a schema library onto the hot path.
import { ServerfsError } from "../../errors.ts";
import { isPlainObject } from "./protocol.ts";

export type ParamType = "string" | "int" | "string?" | "string[]" | "array" | "bool";

export interface MethodShape {
  required: Record<string, ParamType>;
  optional: Record<string, ParamType>;
}

export const METHOD_SHAPES: Record<string, MethodShape> = {
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
  "task.question.answer": { required: { task_id: "string", request_id: "string", answers: "array" }, optional: { decided_by: "string" } },
  "task.message.send": { required: { task_id: "string", message: "string" }, optional: {} },
  "task.cancel": { required: { task_id: "string" }, optional: {} },
  // Operator-only additions (serverfs tasks / service status); additive to protocol v1.
  "task.list": { required: {}, optional: { limit: "int", status: "string" } },
  "bridge.status": { required: {}, optional: {} },
};

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

/** The shape of a known method. Own keys only: `toString`, `constructor`, `__proto__` are not methods. */
export function methodShape(method: string): MethodShape | null {
  return Object.hasOwn(METHOD_SHAPES, method) ? METHOD_SHAPES[method]! : null;
}

/**
 * Throws INVALID_REQUEST naming the offending key; returns the params unchanged when valid. Every
 * lookup is an own-property check, so an inherited name (`hasOwnProperty`) or a JSON `"__proto__"`
 * key (which JSON.parse makes an own key, not a prototype) is just an unknown parameter.
 */
export function checkParams(method: string, params: Record<string, unknown>): Record<string, unknown> {
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
  return params;
}

export { isPlainObject };
