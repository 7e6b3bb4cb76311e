// A host's opening (initialize, notifications/initialized, tools/list), answered from build-time
// bytes before the MCP SDK, zod and the tools are loaded: loading them is most of a cold start,
// and the opening needs none of them. Only frames of a few exact shapes are answered here, each
// one the wire gate (wire.ts), the era lock (era.ts) and the SDK would accept and answer with
// these same bytes; the first frame of any other shape, a version the SDK would not echo, or a
// frame over OPENING_FRAME_BYTES ends the opening, and from there the full server answers.
// Everything the opening read is then replayed into the full server's transport, so the SDK's
// state is exactly as if it had read the frames itself; its answers to the requests already
// answered are compared with what was written and dropped (transport.ts). This module loads none
// of the SDK, zod, the tools or the file layer.
import type { Registry } from "../config/types.ts";
import { publishedLimits } from "../fs/published-limits.ts";
import { SERVER_INFO, SERVER_INSTRUCTIONS, serverCapabilities } from "./identity.ts";
import { fileToolNames } from "./surface-plan.ts";
import { prebuiltListingText } from "./tools/fs/schemas.ts";

/**
 * The 2025-era protocol versions the SDK's initialize echoes back (its supported versions before
 * the 2026-07-28 revision). Any other requested version is negotiated by the SDK itself.
 * test/mcp/opening.test.ts holds this to the SDK's answers.
 */
export const OPENING_PROTOCOL_VERSIONS: readonly string[] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];

/**
 * Longest frame answered here. Too short to go over any per-frame bound of frame-scan.ts (10,000
 * values or strings need more than 20 KiB; the shapes accepted below nest 5 deep at most), so no
 * frame answered here is one the wire gate would refuse for its cost.
 */
export const OPENING_FRAME_BYTES = 8 * 1024;

type RequestId = string | number;

/** What the opening does with one frame. */
export type OpeningStep =
  | { kind: "answer"; id: RequestId; method: "initialize" | "tools/list"; text: string }
  /** notifications/initialized: nothing to answer. */
  | { kind: "silent" }
  /** Not one of the opening's shapes: the full server takes over from this frame on. */
  | { kind: "handover" };

/** The answers a deployment's opening needs, or undefined when its tools/list is not known before loading. */
export interface OpeningPlan {
  /** How many tools tools/list names (file tools only: a deployment with the Bridge enabled has no plan). */
  toolCount: number;
  /** Their entries as JSON text, comma-separated: the inside of the answer's `tools` array. */
  toolsText: string;
}

/**
 * The plan for `registry`: only without the Agent Bridge (its tools and writer lease are built
 * from the Bridge's modules) and at the default published limits (the build-time listing's).
 */
export function openingPlan(registry: Registry): OpeningPlan | undefined {
  if (registry.agent.enabled) return undefined;
  const listing = prebuiltListingText(publishedLimits(registry));
  if (listing === undefined) return undefined;
  const names = fileToolNames(registry);
  return { toolCount: names.length, toolsText: names.map((name) => listing[name]).join(",") };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every key of `v` is one of `allowed`, and every one of `required` is there. */
function keysWithin(v: Record<string, unknown>, allowed: readonly string[], required: readonly string[] = []): boolean {
  for (const key of Object.keys(v)) if (!allowed.includes(key)) return false;
  return required.every((key) => Object.hasOwn(v, key));
}

function isEmptyObject(v: unknown): boolean {
  return isPlainObject(v) && Object.keys(v).length === 0;
}

/** An object whose members are each absent or an empty object (sampling's and elicitation's sub-capabilities). */
function emptyMembersOnly(v: unknown, allowed: readonly string[]): boolean {
  return isPlainObject(v) && keysWithin(v, allowed) && Object.values(v).every(isEmptyObject);
}

function isRequestId(v: unknown): v is RequestId {
  return typeof v === "string" || Number.isSafeInteger(v);
}

/** The client capabilities answered here: roots, sampling and elicitation in their plain forms. */
function plainCapabilities(v: unknown): boolean {
  if (!isPlainObject(v) || !keysWithin(v, ["roots", "sampling", "elicitation"])) return false;
  if (v.roots !== undefined) {
    if (!isPlainObject(v.roots) || !keysWithin(v.roots, ["listChanged"])) return false;
    if (v.roots.listChanged !== undefined && typeof v.roots.listChanged !== "boolean") return false;
  }
  if (v.sampling !== undefined && !emptyMembersOnly(v.sampling, ["context", "tools"])) return false;
  if (v.elicitation !== undefined && !emptyMembersOnly(v.elicitation, ["form", "url"])) return false;
  return true;
}

function plainClientInfo(v: unknown): boolean {
  if (!isPlainObject(v) || !keysWithin(v, ["name", "version", "title", "websiteUrl", "description"], ["name", "version"])) return false;
  return Object.values(v).every((s) => typeof s === "string");
}

/** `params` absent or `{}`. */
function noParams(message: Record<string, unknown>): boolean {
  return !Object.hasOwn(message, "params") || isEmptyObject(message.params);
}

/** The answer line the SDK writes for a result: `{"result":…,"jsonrpc":"2.0","id":…}`. */
function answerText(id: RequestId, result: unknown): string {
  return `${JSON.stringify({ result, jsonrpc: "2.0", id })}\n`;
}

/** The opening's frames, one at a time, in the order they arrive. */
export class OpeningAnswerer {
  /** "over" once tools/list is answered or a frame was handed over: every later frame is handed over. */
  private phase: "initialize" | "open" | "over" = "initialize";
  private initializeId: RequestId | undefined;
  private initializedSeen = false;

  constructor(private readonly plan: OpeningPlan) {}

  /** One frame's bytes, without its newline. */
  step(frame: Uint8Array): OpeningStep {
    const step = this.phase === "over" ? undefined : this.answer(frame);
    if (step !== undefined) return step;
    this.phase = "over";
    return { kind: "handover" };
  }

  private answer(frame: Uint8Array): OpeningStep | undefined {
    let end = frame.length;
    if (end > 0 && frame[end - 1] === 13) end -= 1;
    // An object from its first byte to its last: no blank line, no padding, nothing but one object.
    if (end > OPENING_FRAME_BYTES || end < 2 || frame[0] !== 0x7b || frame[end - 1] !== 0x7d) return undefined;
    let message: unknown;
    try {
      message = JSON.parse(Buffer.from(frame.buffer, frame.byteOffset, end).toString("utf8"));
    } catch {
      return undefined;
    }
    if (!isPlainObject(message) || message.jsonrpc !== "2.0") return undefined;
    return this.phase === "initialize" ? this.initialize(message) : this.open(message);
  }

  private initialize(m: Record<string, unknown>): OpeningStep | undefined {
    if (m.method !== "initialize" || !keysWithin(m, ["jsonrpc", "id", "method", "params"], ["id", "params"])) return undefined;
    const { id, params } = m;
    if (!isRequestId(id) || !isPlainObject(params)) return undefined;
    if (!keysWithin(params, ["protocolVersion", "capabilities", "clientInfo"], ["protocolVersion", "capabilities", "clientInfo"])) return undefined;
    const version = params.protocolVersion;
    if (typeof version !== "string" || !OPENING_PROTOCOL_VERSIONS.includes(version)) return undefined;
    if (!plainCapabilities(params.capabilities) || !plainClientInfo(params.clientInfo)) return undefined;
    this.phase = "open";
    this.initializeId = id;
    const result = { protocolVersion: version, capabilities: serverCapabilities(), serverInfo: SERVER_INFO, instructions: SERVER_INSTRUCTIONS };
    return { kind: "answer", id, method: "initialize", text: answerText(id, result) };
  }

  private open(m: Record<string, unknown>): OpeningStep | undefined {
    if (m.method === "notifications/initialized") {
      if (this.initializedSeen || !keysWithin(m, ["jsonrpc", "method", "params"]) || !noParams(m)) return undefined;
      this.initializedSeen = true;
      return { kind: "silent" };
    }
    if (m.method !== "tools/list" || !keysWithin(m, ["jsonrpc", "id", "method", "params"], ["id"]) || !noParams(m)) return undefined;
    const id = m.id;
    // A reused id is left to the SDK, whatever it makes of it.
    if (!isRequestId(id) || String(id) === String(this.initializeId)) return undefined;
    this.phase = "over";
    // JSON.stringify's text of { result: { tools }, jsonrpc, id }, without parsing the entries.
    const text = `{"result":{"tools":[${this.plan.toolsText}]},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n`;
    return { kind: "answer", id, method: "tools/list", text };
  }
}
