// The MCP server object: the SDK's protocol `Server` with our handlers for tools and the one
// resource template. The low-level Server is used (not McpServer) so that every tools/call —
// including one with invalid arguments — goes through the tool wrapper: coded INVALID_ARGUMENT
// errors and exactly one audit line per call, which McpServer's own pre-validation would bypass.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Registry } from "../config/types.ts";
import { ServerfsError, errnoCode } from "../errors.ts";
import type { LogFields, Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import { InFlight } from "./inflight.ts";
import { SERVER_INSTRUCTIONS } from "./instructions.ts";
import { buildToolSurface } from "./surface.ts";
import { type McpTool, type RequestExtra, type ToolRuntime, auditRefusedCall } from "./tool.ts";
import type { FileServiceApi } from "./tools/fs/service.ts";
import { RESOURCE_URI_TEMPLATE, parseResourceUri } from "./uri.ts";
import type { RequestSchemas } from "./wire.ts";

export interface McpServerOptions {
  registry: Registry;
  files: FileServiceApi;
  logger: Logger;
  /** Agent Bridge tools, built by the caller; listed only when the registry allows them. */
  agentTools?: readonly McpTool[];
}

export interface ServerfsMcp {
  server: Server;
  registry: Registry;
  tools: readonly McpTool[];
  inflight: InFlight;
  /** Every request method the server answers, with the schema its handler parses: the wire gate checks against these. */
  requests: RequestSchemas;
}

/** JSON-RPC error for a refused resource read: message `CODE: detail`, the code again in `data`. */
class ResourceReadError extends Error {
  readonly code: number;
  readonly data: { code: string };
  constructor(rpcCode: number, code: string, text: string) {
    super(text);
    this.code = rpcCode;
    this.data = { code };
  }
}

export function createMcpServer(options: McpServerOptions): ServerfsMcp {
  const { registry, files, logger } = options;
  const tools = buildToolSurface(registry, { files, limits: files.limits() }, options.agentTools);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const runtime: ToolRuntime = { logger, workdirs: new Set(registry.workdirs.map((w) => w.alias)) };
  const inflight = new InFlight();

  const server = new Server(
    { name: "serverfs", title: "serverfs", version: VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: SERVER_INSTRUCTIONS },
  );

  // The SDK registers initialize and ping itself; every other handler goes through `handle`, so the
  // wire gate's table cannot miss a method the server answers.
  const requests = new Map<string, z.ZodType>();
  for (const schema of [InitializeRequestSchema, PingRequestSchema]) requests.set(schema.shape.method.value, schema);
  const handle = ((schema: { shape: { method: { value: string } } } & z.ZodType, handler: never) => {
    requests.set(schema.shape.method.value, schema);
    server.setRequestHandler(schema as never, handler);
  }) as Server["setRequestHandler"];

  handle(ListToolsRequestSchema, () => ({ tools: tools.map((t) => t.listing()) }));

  handle(CallToolRequestSchema, (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      // The requested name is caller input: it is not logged.
      auditRefusedCall(logger, "UNKNOWN_TOOL");
      throw new McpError(ErrorCode.InvalidParams, "unknown tool");
    }
    const signal = AbortSignal.any([extra.signal, inflight.shutdownSignal]);
    return inflight.track(tool.call(request.params.arguments, { signal, extra }, runtime));
  });

  handle(ListResourcesRequestSchema, () => ({ resources: [] }));

  handle(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: RESOURCE_URI_TEMPLATE,
        name: "workdir_text_file",
        title: "Text file in a workdir",
        description:
          "The whole text of a UTF-8 file, e.g. serverfs://docs/notes/todo.md. Refused with RESOURCE_TOO_LARGE " +
          "when it exceeds the workdir's read limits; use read_text_file to page through large files.",
        mimeType: "text/plain",
      },
    ],
  }));

  handle(ReadResourceRequestSchema, (request, extra) =>
    inflight.track(readResource(request.params.uri, extra, files, runtime)),
  );

  return { server, registry, tools, inflight, requests };
}

async function readResource(
  uri: string,
  _extra: RequestExtra,
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
      throw new ResourceReadError(ErrorCode.InvalidParams, err.code, err.toText());
    }
    // Unexpected failures never forward their message (it may hold a host path).
    audit.error_code = "READ_FAILED";
    runtime.logger.error("resource_internal_error", {
      error_class: err instanceof Error ? err.constructor.name : typeof err,
      errno: errnoCode(err),
    });
    throw new ResourceReadError(ErrorCode.InternalError, "READ_FAILED", "READ_FAILED: the resource could not be read");
  } finally {
    audit.duration_ms = Math.round((performance.now() - started) * 1000) / 1000;
    runtime.logger.info("resource_read", audit);
  }
}
