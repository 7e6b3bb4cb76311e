// The one tool-definition helper. A tool is declared once (name, texts, zod input and output
// schemas, all four annotations, a handler) and `defineTool` closes over the handler: the only
// way to run it is `McpTool.call`, which applies argument parsing, error mapping, output
// validation, the text mirror and the audit line. No tool can skip any of them.
import type { LargeAnswerGate } from "./large-answers.ts";
import type {
  CallToolResult,
  ClientCapabilities,
  ContentBlock,
  InputRequiredResult,
  RequestMeta,
  ServerContext,
  ServerNotification,
  Tool,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { escapeControls, escapeControlsInJson } from "../common/escape.ts";
import { ServerfsError, errnoCode } from "../errors.ts";
import type { LogFields, Logger } from "../log.ts";

/** readOnly / destructive / idempotent; `openWorldHint` is always false and set here, not per tool. */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
}

/** The annotation rows of docs/tools.md, named by what the tool does to the tree. */
export const HINTS = {
  /** Reads only. */
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  /** Adds an entry; a failed repeat still touches the parent directory's metadata (temp entry). */
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  /** Adds an entry; a repeat changes nothing (it fails with PATH_ALREADY_EXISTS). */
  createIdempotent: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  /** Replaces or removes existing bytes; guarded by a revision, so a repeat changes nothing more. */
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
} as const satisfies Record<string, ToolHints>;

/** A request's extras as tools use them, whichever protocol era the connection speaks. */
export interface RequestExtra {
  /** The request's `_meta` without the 2026 envelope keys (the progress token lives here in both eras). */
  _meta?: RequestMeta;
  /** A notification tied to this request (progress). */
  sendNotification: (notification: ServerNotification) => Promise<void>;
  /** The SDK's own request context (input responses, request state), for the few tools that need it. */
  ctx?: ServerContext;
  /** The request's JSON-RPC id (absent where a tool is called outside a request). */
  requestId?: string | number;
  /** The server's one-large-answer-at-a-time gate (large-answers.ts); absent outside a server. */
  largeAnswers?: LargeAnswerGate;
  /** What the client declared it supports: at initialize (2025 era) or in this request's envelope (2026). */
  clientCapabilities?: ClientCapabilities;
}

export interface ToolContext {
  /** Aborted when the client cancels the request or the server shuts down. */
  signal: AbortSignal;
  /** The per-request extras (progress token in `_meta`, `sendNotification`). */
  extra: RequestExtra;
}

/**
 * What a handler returns: the structuredContent object, plus content blocks to put before its text
 * mirror; or a request for the client's input (an elicitation the human answers), after which the
 * SDK calls the tool again with the answer (a retry in the 2026 era, a re-entry in the 2025 one).
 */
export type ToolReply<O> = { structured: O; content?: ContentBlock[] } | { inputRequired: InputRequiredResult };

export type AuditFields = Record<string, string | number | boolean>;

export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  hints: ToolHints;
  input: I;
  output: O;
  handler: (args: z.output<I>, ctx: ToolContext) => Promise<ToolReply<z.input<O>>>;
  /** Extra audit counts derived from the arguments (counts only: never text the caller supplied). */
  auditArgs?: (args: z.output<I>) => AuditFields;
  /** Extra audit counts derived from a successful result, for results the default picker cannot see into. */
  auditResult?: (structured: z.output<O>) => AuditFields;
}

/** Everything a call needs from the server around it. */
export interface ToolRuntime {
  logger: Logger;
  /** Configured aliases: only these are ever written to the audit log (a caller's unknown alias is input, not a name). */
  workdirs: ReadonlySet<string>;
}

export interface McpTool {
  readonly name: string;
  readonly hints: ToolHints;
  /**
   * The tools/list entry, converted from the zod schemas once, on first use (serve lists the file
   * tools' build-time entries instead when its limits are the defaults: src/mcp/tools/fs/schemas.ts).
   */
  listing(): Tool;
  call(rawArgs: unknown, ctx: ToolContext, runtime: ToolRuntime): Promise<CallToolResult | InputRequiredResult>;
}

const INTERNAL_TEXT = "INTERNAL_ERROR: unexpected internal error";

/**
 * Result fields that may go into the audit line: counts, flags, kinds and opaque tokens. Paths,
 * names, content, queries and hashes of content are deliberately absent.
 */
const AUDITED_RESULT_FIELDS = [
  "returned",
  "has_more",
  "truncated",
  "unreadable",
  "offset",
  "limit",
  "bytes_returned",
  "start_line",
  "end_line",
  "type",
  "size",
  "mime_type",
  "bytes_written",
  "edits_applied",
  "bytes_before",
  "bytes_after",
  "bytes_deleted",
  "created",
  "replaced",
  "edited",
  "deleted",
  "revision",
  "revision_before",
  "revision_deleted",
] as const;

const ERROR_OUTPUT_JSON_SCHEMA = {
  type: "object",
  properties: {
    code: { type: "string", description: "stable error code, e.g. PATH_NOT_FOUND" },
    message: { type: "string", description: "what was wrong, in terms of the request" },
  },
  required: ["code", "message"],
  additionalProperties: false,
} as const;

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  // Draft-07 output is identical to 2020-12 for the keywords used here; `$schema` is dropped
  // because MCP clients disagree on which dialect URI they accept.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: "draft-7" }) as Record<string, unknown>;
  return rest;
}

/**
 * The success object or the error object. A recursive output (directory_tree's nodes) converts
 * with `definitions` and `$ref`s to `#/definitions/…`: they are hoisted to the root, where the
 * refs resolve, instead of staying inside the anyOf branch.
 */
function outputJsonSchema(output: z.ZodType): Tool["outputSchema"] {
  const { definitions, ...success } = jsonSchemaOf(output, "output");
  return {
    type: "object",
    anyOf: [success, ERROR_OUTPUT_JSON_SCHEMA],
    ...(definitions === undefined ? {} : { definitions }),
  } as Tool["outputSchema"];
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>): McpTool {
  let cachedListing: Tool | undefined;

  const listing = (): Tool => {
    cachedListing ??= {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: jsonSchemaOf(spec.input, "input") as Tool["inputSchema"],
      // An error result also carries structuredContent ({code, message}); the SDK client
      // validates structuredContent whenever it is present, so the published schema admits
      // exactly the success object or the error object.
      outputSchema: outputJsonSchema(spec.output),
      annotations: { title: spec.title, ...spec.hints, openWorldHint: false },
    };
    return cachedListing;
  };

  const call = async (rawArgs: unknown, ctx: ToolContext, runtime: ToolRuntime): Promise<CallToolResult | InputRequiredResult> => {
    const started = performance.now();
    const audit: LogFields = { tool: spec.name };
    const alias = aliasOf(rawArgs);
    if (alias !== undefined && runtime.workdirs.has(alias)) audit.workdir = alias;

    let result: CallToolResult;
    try {
      const parsed = spec.input.safeParse(rawArgs ?? {});
      if (!parsed.success) throw new ServerfsError("INVALID_ARGUMENT", describeIssues(parsed.error));
      const args = parsed.data;
      if (spec.auditArgs) Object.assign(audit, spec.auditArgs(args));
      const reply = await spec.handler(args, ctx);
      if ("inputRequired" in reply) {
        // Not a result yet: the audit line says so, and the answer's round writes its own.
        audit.success = true;
        audit.input_required = true;
        return finish(reply.inputRequired);
      }
      const checked = spec.output.safeParse(reply.structured);
      if (!checked.success) {
        // A contract bug between layers: say which field, never its value.
        runtime.logger.error("tool_output_invalid", {
          tool: spec.name,
          field: checked.error.issues[0]?.path.join(".") ?? "",
        });
        throw new InternalFailure();
      }
      const structured = checked.data as Record<string, unknown>;
      Object.assign(audit, pickAuditFields(structured));
      if (spec.auditResult) Object.assign(audit, spec.auditResult(checked.data));
      result = {
        // The mirror parses to exactly structuredContent, with nothing in it that can draw.
        content: [...(reply.content ?? []), { type: "text", text: escapeControlsInJson(JSON.stringify(structured)) }],
        structuredContent: structured,
      };
      audit.success = true;
    } catch (err) {
      result = errorResult(err, spec.name, runtime.logger);
      audit.success = false;
      audit.error_code = (result.structuredContent as { code: string }).code;
    }
    return finish(result);

    function finish<R>(r: R): R {
      audit.duration_ms = Math.round((performance.now() - started) * 1000) / 1000;
      runtime.logger.info("tool_call", audit);
      return r;
    }
  };

  return { name: spec.name, hints: spec.hints, listing, call };
}

/**
 * The audit line of a tools/call refused before any tool ran: a malformed request (`INVALID_PARAMS`,
 * answered -32602 by the wire gate) or an unknown tool (`UNKNOWN_TOOL`). The tool name and the
 * arguments are caller input and are not logged.
 */
export function auditRefusedCall(logger: Logger, errorCode: "INVALID_PARAMS" | "UNKNOWN_TOOL"): void {
  logger.info("tool_call", { success: false, error_code: errorCode, duration_ms: 0 });
}

/** Marks a failure already logged in detail; it maps to the fixed INTERNAL_ERROR result. */
class InternalFailure extends Error {}

function errorResult(err: unknown, tool: string, logger: Logger): CallToolResult {
  if (err instanceof ServerfsError) {
    return {
      isError: true,
      content: [{ type: "text", text: escapeControls(err.toText()) }],
      structuredContent: { code: err.code, message: err.message },
    };
  }
  if (!(err instanceof InternalFailure)) {
    // The foreign message may hold a host path: record only its class and errno name.
    logger.error("tool_internal_error", {
      tool,
      error_class: err instanceof Error ? err.constructor.name : typeof err,
      errno: errnoCode(err),
    });
  }
  return {
    isError: true,
    content: [{ type: "text", text: INTERNAL_TEXT }],
    structuredContent: { code: "INTERNAL_ERROR", message: "unexpected internal error" },
  };
}

function aliasOf(rawArgs: unknown): string | undefined {
  if (rawArgs && typeof rawArgs === "object" && "workdir" in rawArgs) {
    const value = (rawArgs as { workdir: unknown }).workdir;
    if (typeof value === "string") return value;
  }
  return undefined;
}

function pickAuditFields(structured: Record<string, unknown>): AuditFields {
  const picked: AuditFields = {};
  for (const key of AUDITED_RESULT_FIELDS) {
    const value = structured[key];
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "string") picked[key] = value;
  }
  return picked;
}

/** Longest piece of one issue (its path or zod's message) in an INVALID_ARGUMENT message. */
const MAX_ISSUE_CHARS = 200;

/**
 * A coded INVALID_ARGUMENT message naming the parameter and the rule, never the value given. The
 * names in it are the caller's (an unknown key is echoed): cut, and unable to draw.
 */
function describeIssues(error: z.ZodError): string {
  const cut = (s: string) => escapeControls(s.length > MAX_ISSUE_CHARS ? `${s.slice(0, MAX_ISSUE_CHARS)}…` : s);
  const parts = error.issues.slice(0, 3).map((issue) => {
    const where = issue.path.length > 0 ? `'${cut(issue.path.join("."))}'` : "arguments";
    return `${where}: ${cut(issue.message)}`;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : "";
  return `invalid arguments: ${parts.join("; ")}${more}`;
}
