// ACP `session/update` traffic → the Bridge event vocabulary. Updates arrive unvalidated (an
// unknown update type must become a marker, not a dropped message), so every field is read
// defensively and every payload is bounded here; the Bridge still redacts paths and enforces its
// own size and count limits on top. `_meta` and raw tool input/output are never copied.
//
// Message chunks are aggregated into one `agent.message` per segment: a segment ends at a tool
// call, a permission request, a change of `messageId`, or the end of the turn. The final response
// is the last non-empty segment (the agent's closing answer, not its running commentary).

import type { ProviderEventType } from "../types.ts";

export interface NormalizedEvent {
  type: ProviderEventType;
  payload: Record<string, unknown>;
}

/** Final responses beyond this cannot be stored (the 8 MiB spool ceiling of docs/agent-bridge.md, "What the caller sees"). */
export const MAX_FINAL_RESPONSE_BYTES = 8 * 1024 * 1024;
const MAX_THOUGHT_CHARS = 4096;
const MAX_TITLE_CHARS = 512;
const MAX_PLAN_ENTRIES = 50;
const MAX_PATHS = 16;
const MAX_UNKNOWN_TYPES = 16;
const MAX_TRACKED_TOOL_CALLS = 10_000;
const TOOL_KINDS = new Set(["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]);
const TOOL_STATUSES = new Set(["pending", "in_progress", "completed", "failed"]);

export function boundedText(value: unknown, max: number): string | null {
  if (typeof value !== "string") return null;
  const oneLine = value.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ");
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

function boundedEnum(value: unknown, allowed: Set<string>): string | null {
  return typeof value === "string" && allowed.has(value) ? value : null;
}

/** Update type names are agent-chosen: keep a bounded identifier-like form. */
export function boundedTypeName(value: string): string {
  const clean = value.replace(/[^A-Za-z0-9_./-]/g, "?");
  return clean.length > 64 ? clean.slice(0, 64) : clean || "?";
}

function textOf(content: unknown): string | null {
  if (content && typeof content === "object") {
    const c = content as { type?: unknown; text?: unknown };
    if (c.type === "text" && typeof c.text === "string") return c.text;
  }
  return null;
}

function pathsOf(locations: unknown): string[] | null {
  if (!Array.isArray(locations)) return null;
  const out: string[] = [];
  for (const loc of locations) {
    if (out.length >= MAX_PATHS) break;
    const p = loc && typeof loc === "object" ? (loc as { path?: unknown }).path : undefined;
    const bounded = boundedText(p, 4096);
    if (bounded !== null) out.push(bounded);
  }
  return out;
}

interface ToolState {
  title: string | null;
  kind: string | null;
  status: string | null;
}

/** Fields of a `tool_call`, `tool_call_update` or `request_permission.toolCall`, bounded. */
export interface ToolFields {
  toolCallId: string;
  title: string | null;
  kind: string | null;
  status: string | null;
  paths: string[] | null;
}

export function toolFields(raw: unknown): ToolFields | null {
  if (!raw || typeof raw !== "object") return null;
  const t = raw as Record<string, unknown>;
  const id = boundedText(t.toolCallId, 256);
  if (id === null || id.length === 0) return null;
  return {
    toolCallId: id,
    title: boundedText(t.title, MAX_TITLE_CHARS),
    kind: boundedEnum(t.kind, TOOL_KINDS),
    status: boundedEnum(t.status, TOOL_STATUSES),
    paths: pathsOf(t.locations),
  };
}

export class UpdateMapper {
  private segment = "";
  private segmentBytes = 0;
  private segmentMessageId: string | null = null;
  private thought = "";
  private thoughtTruncated = false;
  private lastSegment = "";
  private overflow = false;
  private readonly tools = new Map<string, ToolState>();
  private readonly unknownTypes = new Set<string>();

  /** True once the agent's text exceeded what a final response may hold. */
  get resultTooLarge(): boolean {
    return this.overflow;
  }

  /** Map one update; returns the events to emit, in order. */
  push(update: Record<string, unknown> & { sessionUpdate: string }): NormalizedEvent[] {
    const out: NormalizedEvent[] = [];
    switch (update.sessionUpdate) {
      case "agent_message_chunk": {
        const text = textOf(update.content);
        if (text === null) return out;
        const messageId = typeof update.messageId === "string" ? update.messageId : null;
        if (messageId !== null && this.segmentMessageId !== null && messageId !== this.segmentMessageId) {
          this.endSegment(out);
        }
        this.flushThought(out);
        if (messageId !== null) this.segmentMessageId = messageId;
        this.appendText(text);
        return out;
      }
      case "agent_thought_chunk": {
        const text = textOf(update.content);
        if (text === null) return out;
        if (this.thought.length + text.length > MAX_THOUGHT_CHARS) {
          this.thought += text.slice(0, Math.max(0, MAX_THOUGHT_CHARS - this.thought.length));
          this.thoughtTruncated = true;
        } else {
          this.thought += text;
        }
        return out;
      }
      case "tool_call":
      case "tool_call_update": {
        this.endSegment(out);
        const fields = toolFields(update);
        if (fields) this.upsertTool(fields, out);
        return out;
      }
      case "plan": {
        this.flushThought(out);
        const entries = Array.isArray(update.entries) ? update.entries : [];
        out.push({
          type: "plan.updated",
          payload: {
            entries: entries.slice(0, MAX_PLAN_ENTRIES).map((e: unknown) => {
              const entry = (e && typeof e === "object" ? e : {}) as Record<string, unknown>;
              return {
                content: boundedText(entry.content, MAX_TITLE_CHARS) ?? "",
                priority: boundedEnum(entry.priority, new Set(["high", "medium", "low"])),
                status: boundedEnum(entry.status, new Set(["pending", "in_progress", "completed"])),
              };
            }),
            ...(entries.length > MAX_PLAN_ENTRIES ? { truncated: true, entry_count: entries.length } : {}),
          },
        });
        return out;
      }
      case "current_mode_update": {
        const mode = boundedText(update.currentModeId, 128);
        if (mode !== null) out.push({ type: "mode.changed", payload: { mode_id: mode } });
        return out;
      }
      case "usage_update": {
        const used = typeof update.used === "number" && Number.isFinite(update.used) ? update.used : null;
        const size = typeof update.size === "number" && Number.isFinite(update.size) ? update.size : null;
        const cost = usageCost(update.cost);
        if (used !== null || size !== null || cost !== null) out.push({ type: "usage.updated", payload: { used, size, cost } });
        return out;
      }
      // Known, and deliberately not events: replayed/echoed user text, slash-command menus,
      // titles and option lists (the adapter reads config options from responses).
      case "user_message_chunk":
      case "available_commands_update":
      case "session_info_update":
      case "config_option_update":
        return out;
      default: {
        const name = boundedTypeName(update.sessionUpdate);
        if (!this.unknownTypes.has(name) && this.unknownTypes.size < MAX_UNKNOWN_TYPES) {
          this.unknownTypes.add(name);
          out.push({ type: "acp.update_unknown", payload: { update_type: name } });
        }
        return out;
      }
    }
  }

  /** A permission request is a segment boundary and may be the first sight of its tool call. */
  permissionRequested(toolCall: unknown): NormalizedEvent[] {
    const out: NormalizedEvent[] = [];
    this.endSegment(out);
    const fields = toolFields(toolCall);
    if (fields) this.upsertTool(fields, out);
    return out;
  }

  /** End of turn: flush what is buffered; returns the events and the final response text. */
  finish(): { events: NormalizedEvent[]; finalResponse: string } {
    const out: NormalizedEvent[] = [];
    this.endSegment(out);
    this.flushThought(out);
    return { events: out, finalResponse: this.lastSegment };
  }

  private appendText(text: string): void {
    if (this.overflow) return;
    const bytes = Buffer.byteLength(text, "utf8");
    if (this.segmentBytes + bytes > MAX_FINAL_RESPONSE_BYTES) {
      this.overflow = true;
      return;
    }
    this.segment += text;
    this.segmentBytes += bytes;
  }

  private endSegment(out: NormalizedEvent[]): void {
    this.flushThought(out);
    if (this.segment.length > 0) {
      out.push({ type: "agent.message", payload: { text: this.segment } });
      this.lastSegment = this.segment;
    }
    this.segment = "";
    this.segmentBytes = 0;
    this.segmentMessageId = null;
  }

  private flushThought(out: NormalizedEvent[]): void {
    if (this.thought.length === 0) return;
    out.push({
      type: "agent.thought",
      payload: this.thoughtTruncated ? { text: this.thought, truncated: true } : { text: this.thought },
    });
    this.thought = "";
    this.thoughtTruncated = false;
  }

  private upsertTool(f: ToolFields, out: NormalizedEvent[]): void {
    const known = this.tools.get(f.toolCallId);
    if (!known) {
      if (this.tools.size >= MAX_TRACKED_TOOL_CALLS) return;
      const state: ToolState = { title: f.title, kind: f.kind, status: f.status ?? "pending" };
      this.tools.set(f.toolCallId, state);
      out.push({
        type: "tool.started",
        payload: {
          tool_call_id: f.toolCallId,
          title: state.title,
          kind: state.kind,
          status: state.status,
          ...(f.paths && f.paths.length > 0 ? { paths: f.paths } : {}),
        },
      });
      if (state.status === "completed" || state.status === "failed") {
        out.push({ type: "tool.completed", payload: { tool_call_id: f.toolCallId, status: state.status } });
      }
      return;
    }
    const changed: Record<string, unknown> = {};
    if (f.title !== null && f.title !== known.title) changed.title = known.title = f.title;
    if (f.kind !== null && f.kind !== known.kind) changed.kind = known.kind = f.kind;
    if (f.status !== null && f.status !== known.status) {
      known.status = f.status;
      if (f.status === "completed" || f.status === "failed") {
        out.push({ type: "tool.completed", payload: { tool_call_id: f.toolCallId, status: f.status, ...changed } });
        return;
      }
      changed.status = f.status;
    }
    if (Object.keys(changed).length > 0) out.push({ type: "tool.updated", payload: { tool_call_id: f.toolCallId, ...changed } });
  }
}

/** ACP's cumulative session cost `{amount, currency}`; anything else is no cost (null). */
function usageCost(raw: unknown): { amount: number; currency: string } | null {
  if (!raw || typeof raw !== "object") return null;
  const c = raw as { amount?: unknown; currency?: unknown };
  if (typeof c.amount !== "number" || !Number.isFinite(c.amount)) return null;
  const currency = boundedText(c.currency, 16);
  return currency === null || currency === "" ? null : { amount: c.amount, currency };
}
