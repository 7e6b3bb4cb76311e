// The one gate every inbound frame passes before the SDK sees it. First its cost: a frame over the
// per-message bounds (frame-scan.ts) is answered or dropped from its bytes alone, and a batch is
// refused, before anything is parsed. Then its shape: the SDK's stdio transport drops a frame that
// fails its envelope schema (params that is an array, `_meta` that is a string, a progressToken of
// the wrong type) without answering, so the client waits forever; and a frame that passes the
// envelope but not the method's schema reaches the SDK's handler wrapper, whose ZodError becomes
// -32603 carrying the whole schema dump. Here each request is checked once, against the same SDK
// schema its handler parses with, and refused with one short, coded line.
import {
  ClientNotificationSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResponseSchema,
  RequestIdSchema,
} from "@modelcontextprotocol/core";
import { type JSONRPCMessage, ProtocolErrorCode as ErrorCode } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { escapeControls } from "../common/escape.ts";
import { FRAME_BOUNDS, type FrameBound, type FrameShape } from "./frame-scan.ts";

/** An error answer; `id` is null when the frame had none that could be read (JSON-RPC's rule). */
export interface WireError {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

export type DropReason = "no_id" | "bad_notification" | "bad_response" | "over_bounds" | "wrong_era";

/** What the transport does with one frame. */
export type Inbound =
  | { kind: "pass"; message: JSONRPCMessage }
  /** Answer with `reply` and do not deliver; `method` is set only when it is one the server handles. */
  | { kind: "refuse"; reply: WireError; method?: string; bound?: FrameBound }
  /** Nothing can be answered (no usable id, or a notification): drop it. */
  | { kind: "drop"; reason: DropReason; bound?: FrameBound };

/** Request schemas keyed by method: exactly the methods the server answers. */
export type RequestSchemas = ReadonlyMap<string, z.ZodType>;

const ENVELOPE_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const MAX_MESSAGE_CHARS = 200;

const NOTIFICATION_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map(
  ClientNotificationSchema.options.map((s) => [s.shape.method.value as string, s as z.ZodType]),
);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function refuse(id: string | number | null, code: number, message: string, method?: string): Inbound {
  const reply: WireError = { jsonrpc: "2.0", id, error: { code, message: message.slice(0, MAX_MESSAGE_CHARS) } };
  return method === undefined ? { kind: "refuse", reply } : { kind: "refuse", reply, method };
}

const OVER: Record<FrameBound, string> = {
  values: `holds more than ${FRAME_BOUNDS.values} JSON values`,
  strings: `holds more than ${FRAME_BOUNDS.strings} strings`,
  depth: `nests arrays and objects more than ${FRAME_BOUNDS.depth} levels deep`,
};

/**
 * Classify one frame from its scan (`shape`) and, when it is within the bounds, its bytes
 * frame[0, end). Never throws. A batch or a frame over a bound is answered from the scan alone
 * (its bytes were not kept); everything else is parsed and goes through `checkInbound`.
 */
export function checkFrame(shape: FrameShape, frame: Buffer | undefined, end: number, requests: RequestSchemas): Inbound {
  if (shape.top === "array") return refuse(null, ErrorCode.InvalidRequest, "Invalid request: batches (JSON arrays) are not supported; send one message per line");
  if (shape.over !== undefined || frame === undefined) return overBound(shape, shape.over ?? "values", requests);
  let value: unknown;
  try {
    value = JSON.parse(frame.toString("utf8", 0, end));
  } catch {
    return refuse(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON");
  }
  return checkInbound(value, requests);
}

/** A frame over a bound: a request is refused under its own id, anything else is dropped. */
function overBound(shape: FrameShape, bound: FrameBound, requests: RequestSchemas): Inbound {
  if (!shape.hasMethod || !shape.hasId) return { kind: "drop", reason: "over_bounds", bound };
  const id = RequestIdSchema.safeParse(parseText(shape.idText));
  if (!id.success) return { kind: "drop", reason: "no_id", bound };
  const named = parseText(shape.methodText);
  const method = typeof named === "string" && requests.has(named) ? named : undefined;
  const verdict = refuse(id.data, ErrorCode.InvalidRequest, `Invalid request: the message ${OVER[bound]} (serve's limit per message)`, method);
  return { ...verdict, bound } as Inbound;
}

/** A member value's JSON text (at most MAX_MEMBER_BYTES, see frame-scan.ts) as a value. */
function parseText(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Classify one parsed frame. Never throws. */
export function checkInbound(value: unknown, requests: RequestSchemas): Inbound {
  if (!isPlainObject(value)) return refuse(null, ErrorCode.InvalidRequest, "Invalid request: a message must be a JSON object");
  const hasMethod = Object.hasOwn(value, "method");
  const hasId = Object.hasOwn(value, "id");

  if (!hasMethod) {
    // A response to a request of ours (serve sends none today): deliver it only if well formed.
    const parsed = JSONRPCResponseSchema.safeParse(value);
    return parsed.success ? { kind: "pass", message: parsed.data } : { kind: "drop", reason: "bad_response" };
  }

  if (!hasId) {
    // A notification is never answered; one with bad params is dropped rather than left to throw
    // inside the SDK's handler.
    const envelope = JSONRPCNotificationSchema.safeParse(value);
    if (!envelope.success) return { kind: "drop", reason: "bad_notification" };
    const schema = NOTIFICATION_SCHEMAS.get(envelope.data.method);
    if (schema && !schema.safeParse(envelope.data).success) return { kind: "drop", reason: "bad_notification" };
    return { kind: "pass", message: envelope.data };
  }

  const id = RequestIdSchema.safeParse(value.id);
  if (!id.success) return { kind: "drop", reason: "no_id" };
  const rid = id.data;
  if (value.jsonrpc !== "2.0") return refuse(rid, ErrorCode.InvalidRequest, "Invalid request: 'jsonrpc' must be \"2.0\"");
  if (typeof value.method !== "string") return refuse(rid, ErrorCode.InvalidRequest, "Invalid request: 'method' must be a string");
  for (const key of Object.keys(value)) {
    if (!ENVELOPE_KEYS.has(key)) return refuse(rid, ErrorCode.InvalidRequest, "Invalid request: only jsonrpc, id, method and params are allowed");
  }
  const schema = requests.get(value.method);
  // Unknown methods keep the plain JSON-RPC answer, whatever their params look like.
  if (!schema) return refuse(rid, ErrorCode.MethodNotFound, "Method not found");
  const method = value.method;
  if (value.params !== undefined && !isPlainObject(value.params)) {
    return refuse(rid, ErrorCode.InvalidParams, "Invalid params: 'params' must be an object", method);
  }
  const envelope = JSONRPCRequestSchema.safeParse(value);
  if (!envelope.success) return refuse(rid, ErrorCode.InvalidParams, `Invalid params: ${describeIssue(envelope.error, value)}`, method);
  const checked = schema.safeParse(value);
  if (!checked.success) return refuse(rid, ErrorCode.InvalidParams, `Invalid params: ${describeIssue(checked.error, value)}`, method);
  // serve declares no `tasks` capability; the SDK answers a task-augmented request with -32603.
  if (value.params !== undefined && Object.hasOwn(value.params, "task")) {
    return refuse(rid, ErrorCode.InvalidParams, "Invalid params: 'task' is not supported (this server does not create tasks)", method);
  }
  return { kind: "pass", message: envelope.data };
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  object: "an object",
  record: "an object",
  array: "an array",
};

/**
 * The first issue as one line that names the parameter and the rule. Zod's own message is not used:
 * for unions and nested schemas it is a multi-line dump.
 */
export function describeIssue(error: z.ZodError, input: unknown): string {
  const issue = error.issues[0];
  if (!issue) return "'params' is invalid";
  // Schemas are of the whole request; the caller thinks in terms of params.
  const path = issue.path[0] === "params" ? issue.path.slice(1) : issue.path;
  const where = path.length === 0 ? "params" : path.map(String).join(".");
  const shown = `'${escapeControls(where.slice(0, 80))}'`;
  switch (issue.code) {
    case "invalid_type":
      if (valueAt(input, issue.path) === undefined) return `${shown} is required`;
      return `${shown} must be ${ARTICLE[issue.expected] ?? issue.expected}`;
    case "invalid_union":
      return `${shown} has the wrong type`;
    case "invalid_value":
      return `${shown} is not an allowed value`;
    case "too_big":
    case "too_small":
      return `${shown} is out of range`;
    case "unrecognized_keys":
      return `${shown} has an unknown member`;
    default:
      return `${shown} is invalid`;
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const key of path) {
    if (typeof v !== "object" || v === null || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
