// The file tools' tools/list entries, made at build time rather than at the first tools/list of
// every start (z.toJSONSchema of every tool is several ms of a cold start, and serve answers its
// first tools/list before it loads the tools at all: src/mcp/opening.ts). The schemas publish the
// limits (defaults and maxima of `limit`, `max_lines`, `edits`), so the entries are only valid
// for the limits they were made with: those of a deployment that keeps the default limits (every
// `serve --workdir`). Any other deployment converts at run time. build/tool-schemas.ts writes
// schemas.generated.ts; test/mcp/tool-schemas.test.ts fails when it no longer equals the
// run-time listing. This module imports no tool and no zod.
import type { Tool } from "@modelcontextprotocol/server";
import type { FsToolLimits } from "./common.ts";
import { GENERATED_LIMITS, GENERATED_TOOLS } from "./schemas.generated.ts";

let parsed: Readonly<Record<string, Tool>> | undefined;

function matches(limits: FsToolLimits): boolean {
  const keys = Object.keys(GENERATED_LIMITS) as (keyof FsToolLimits)[];
  return Object.keys(limits).length === keys.length && keys.every((k) => limits[k] === GENERATED_LIMITS[k]);
}

/** The build-time tools/list entries by tool name, when `limits` are the ones they were made with. */
export function prebuiltListing(limits: FsToolLimits): Readonly<Record<string, Tool>> | undefined {
  if (!matches(limits)) return undefined;
  parsed ??= Object.fromEntries(Object.entries(GENERATED_TOOLS).map(([name, text]) => [name, JSON.parse(text) as Tool]));
  return parsed;
}

/** The same entries as JSON text (each exactly `JSON.stringify` of its entry), for an answer written without parsing them. */
export function prebuiltListingText(limits: FsToolLimits): Readonly<Record<string, string>> | undefined {
  return matches(limits) ? GENERATED_TOOLS : undefined;
}
