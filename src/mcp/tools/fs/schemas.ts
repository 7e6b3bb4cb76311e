// The file tools' JSON Schemas, converted from their zod schemas at build time rather than at the
// first tools/list of every start (z.toJSONSchema of every tool is a few ms of a ~50 ms cold
// start). The schemas publish the limits (defaults and maxima of `limit`, `max_lines`, `edits`),
// so the conversion is only valid for the limits it was made with: those of a deployment that
// keeps the default limits (every `serve --workdir`). Any other deployment converts at run time.
// build/tool-schemas.ts writes schemas.generated.ts; test/mcp/tool-schemas.test.ts fails when it
// no longer equals the run-time conversion.
import type { ToolSchemas } from "../../tool.ts";
import type { FsToolLimits } from "./common.ts";
import { GENERATED_LIMITS, GENERATED_SCHEMAS } from "./schemas.generated.ts";

let parsed: Record<string, ToolSchemas> | undefined;

/** The build-time schemas by tool name, when `limits` are the ones they were converted with. */
export function prebuiltSchemas(limits: FsToolLimits): Record<string, ToolSchemas> | undefined {
  const keys = Object.keys(GENERATED_LIMITS) as (keyof FsToolLimits)[];
  if (Object.keys(limits).length !== keys.length || keys.some((k) => limits[k] !== GENERATED_LIMITS[k])) return undefined;
  parsed ??= JSON.parse(GENERATED_SCHEMAS) as Record<string, ToolSchemas>;
  return parsed;
}
