// The MCP server: the SDK v2 protocol `Server` with our handlers for tools and the one resource
// template. The low-level Server is used (not McpServer) so that every tools/call — including one
// with invalid arguments — goes through the tool wrapper: coded INVALID_ARGUMENT errors and
// exactly one audit line per call, which McpServer's own pre-validation would bypass.
// The same handlers serve both protocol eras: `build()` is the factory serveStdio calls once per
// connection (twice when a 2026 probe is discarded for a 2025 opening), and the SDK adds the
// era's wire members (resultType, ttlMs/cacheScope, serverInfo in _meta) when it encodes.
import {
  CallToolRequestSchema,
  DiscoverRequestSchema,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SubscriptionsListenRequestSchema,
} from "@modelcontextprotocol/core";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import { escapeControls } from "../common/escape.ts";
import type { Registry } from "../config/types.ts";
import { ServerfsError, errnoCode } from "../errors.ts";
import type { LogFields, Logger } from "../log.ts";
import { elicitationStateCodec } from "./approvals/state.ts";
import { InFlight } from "./inflight.ts";
import { SERVER_INFO, SERVER_INSTRUCTIONS, serverCapabilities } from "./identity.ts";
import { buildToolSurface } from "./surface.ts";
import { type McpTool, type RequestExtra, type ToolRuntime, auditRefusedCall } from "./tool.ts";
import { prebuiltListing } from "./tools/fs/schemas.ts";
import type { FsToolLimits } from "./tools/fs/common.ts";
import type { FileServiceApi } from "./tools/fs/service.ts";
import { RESOURCE_URI_TEMPLATE, parseResourceUri } from "./uri.ts";
import type { RequestSchemas } from "./wire.ts";
import { LargeAnswerGate } from "./large-answers.ts";

export interface McpServerOptions {
  registry: Registry;
  files: FileServiceApi;
  logger: Logger;
  /** Agent Bridge tools, built by the caller; listed only when the registry allows them. */
  agentTools?: readonly McpTool[];
}

export interface ServerfsMcp {
  /** A fresh protocol Server with every handler registered; all share the tools and the shutdown cancel below. */
  build: () => Server;
  registry: Registry;
  tools: readonly McpTool[];
  inflight: InFlight;
  /** Every request method either era may send, with the schema its handler parses: the wire gate checks against these. */
  requests: RequestSchemas;
  /** Media reads and downloads, one large answer at a time (large-answers.ts). */
  largeAnswers: LargeAnswerGate;
}

/** JSON-RPC error for a refused resource read: message `CODE: detail`, the code again in `data`. */
function resourceReadError(rpcCode: number, code: string, text: string): ProtocolError {
  return new ProtocolError(rpcCode, text, { code });
}

/**
 * The tool list and the template list are fixed for the life of the process (they follow the
 * configuration, which serve reads once), so a 2026-era client may cache them for a while. Every
 * client of a stdio server is its own user, hence `private`.
 */
const LIST_CACHE = { ttlMs: 5 * 60 * 1000, cacheScope: "private" } as const;

const RESOURCE_TEMPLATE = {
  uriTemplate: RESOURCE_URI_TEMPLATE,
  name: "workdir_text_file",
  title: "Text file in a workdir",
  description:
    "The whole text of a UTF-8 file, e.g. serverfs://docs/notes/todo.md. Refused with RESOURCE_TOO_LARGE " +
    "when it exceeds the workdir's read limits; use read_text_file to page through large files.",
  mimeType: "text/plain",
};

export function createMcpServer(options: McpServerOptions): ServerfsMcp {
  const { registry, files, logger } = options;
  const limits = files.limits();
  const tools = buildToolSurface(registry, { files, limits }, options.agentTools);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const runtime: ToolRuntime = { logger, workdirs: new Set(registry.workdirs.map((w) => w.alias)) };
  const inflight = new InFlight();
  const largeAnswers = new LargeAnswerGate();
  // The SDK answers initialize, ping and server/discover itself, and serveStdio answers
  // subscriptions/listen; the handlers below are the rest. The gate's table is exactly these.
  const requests: RequestSchemas = new Map<string, z.ZodType>(
    [
      InitializeRequestSchema,
      PingRequestSchema,
      DiscoverRequestSchema,
      SubscriptionsListenRequestSchema,
      ListToolsRequestSchema,
      CallToolRequestSchema,
      ListResourcesRequestSchema,
      ListResourceTemplatesRequestSchema,
      ReadResourceRequestSchema,
    ].map((schema) => [schema.shape.method.value, schema as unknown as z.ZodType]),
  );
  // Built on the first tools/list (a probe-only connection never pays for the JSON Schemas).
  let listing: ReturnType<McpTool["listing"]>[] | undefined;

  const build = (): Server => {
    const server = new Server(
      { ...SERVER_INFO },
      {
        capabilities: serverCapabilities(),
        instructions: SERVER_INSTRUCTIONS,
        cacheHints: { "tools/list": LIST_CACHE, "resources/templates/list": LIST_CACHE, "resources/list": LIST_CACHE },
        // Only an elicitation round (src/mcp/approvals/) mints state; anything else echoed is refused.
        requestState: { verify: (state, ctx) => elicitationStateCodec().verify(state, ctx) },
        // In the 2025 era the SDK holds the tools/call open while the human reads the form: give
        // them as long as the Bridge gives the request itself before it expires.
        inputRequired: { roundTimeoutMs: registry.agent.interaction_timeout_seconds * 1000 },
      },
    );
    // The order is the surface's (fixed by code, not by a Map's insertion history), so two
    // tools/list answers, in either era, are byte-identical.
    server.setRequestHandler("tools/list", () => ({ tools: (listing ??= listTools(tools, limits)) }));
    server.setRequestHandler("tools/call", (request, ctx) => {
      const tool = byName.get(request.params.name);
      if (!tool) {
        // The requested name is caller input: it is not logged.
        auditRefusedCall(logger, "UNKNOWN_TOOL");
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, "unknown tool");
      }
      const signal = AbortSignal.any([ctx.mcpReq.signal, inflight.shutdownSignal]);
      return tool.call(request.params.arguments, { signal, extra: requestExtra(ctx, server, largeAnswers) }, runtime);
    });
    server.setRequestHandler("resources/list", () => ({ resources: [] }));
    server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: [RESOURCE_TEMPLATE] }));
    server.setRequestHandler("resources/read", (request) => readResource(request.params.uri, files, runtime));
    return server;
  };

  return { build, registry, tools, inflight, requests, largeAnswers };
}

/** The tools/list entries: file tools from their build-time entries when the limits match, others converted now. */
function listTools(tools: readonly McpTool[], limits: FsToolLimits): ReturnType<McpTool["listing"]>[] {
  const prebuilt = prebuiltListing(limits);
  return tools.map((t) => prebuilt?.[t.name] ?? t.listing());
}

/** What a tool sees of its request, the same in both eras. */
function requestExtra(ctx: ServerContext, server: Server, largeAnswers: LargeAnswerGate): RequestExtra {
  const declared = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  const clientCapabilities = declared ?? server.getClientCapabilities();
  return {
    ctx,
    requestId: ctx.mcpReq.id,
    largeAnswers,
    ...(clientCapabilities ? { clientCapabilities } : {}),
    ...(ctx.mcpReq._meta ? { _meta: ctx.mcpReq._meta } : {}),
    sendNotification: (notification) => ctx.mcpReq.notify(notification),
  };
}

async function readResource(
  uri: string,
  files: FileServiceApi,
  runtime: ToolRuntime,
): Promise<ReadResourceResult> {
  const started = performance.now();
  const audit: LogFields = {};
  try {
    const target = parseResourceUri(uri);
    if (runtime.workdirs.has(target.workdir)) audit.workdir = target.workdir;
    const { text, mime_type } = await files.readResource(target);
    audit.success = true;
    audit.bytes_returned = Buffer.byteLength(text, "utf8");
    return { contents: [{ uri, mimeType: mime_type, text }] };
  } catch (err) {
    audit.success = false;
    if (err instanceof ServerfsError) {
      audit.error_code = err.code;
      throw resourceReadError(ProtocolErrorCode.InvalidParams, err.code, escapeControls(err.toText()));
    }
    // Unexpected failures never forward their message (it may hold a host path).
    audit.error_code = "READ_FAILED";
    runtime.logger.error("resource_internal_error", {
      error_class: err instanceof Error ? err.constructor.name : typeof err,
      errno: errnoCode(err),
    });
    throw resourceReadError(ProtocolErrorCode.InternalError, "READ_FAILED", "READ_FAILED: the resource could not be read");
  } finally {
    audit.duration_ms = Math.round((performance.now() - started) * 1000) / 1000;
    runtime.logger.info("resource_read", audit);
  }
}
