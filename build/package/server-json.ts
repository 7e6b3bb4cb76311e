// server.json for the MCP Registry: the npm package (run through npx) and the four bundles (by
// their release download URL and SHA-256), validated against the registry's published schema,
// vendored in build/schemas/ so this works offline.
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TargetName } from "../compile.ts";
import { ROOT, bundleName, registryName, releaseDownloadUrl, repositoryUrl, type ReleaseMeta } from "./meta.ts";

export const REGISTRY_SCHEMA = join(ROOT, "build/schemas/mcp-registry-server-2025-12-11.schema.json");
export const REGISTRY_SCHEMA_ID = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

export function serverJson(m: ReleaseMeta, bundles: ReadonlyMap<TargetName, Uint8Array>): Record<string, unknown> {
  return {
    $schema: REGISTRY_SCHEMA_ID,
    name: registryName(m),
    title: "serverfs",
    description: "Chosen host folders over narrow MCP file tools, and coding-agent tasks, with no shell.",
    version: m.version,
    repository: { url: repositoryUrl(m), source: "github" },
    websiteUrl: `${repositoryUrl(m)}#readme`,
    packages: [
      {
        registryType: "npm",
        registryBaseUrl: "https://registry.npmjs.org",
        identifier: "serverfs",
        version: m.version,
        runtimeHint: "npx",
        transport: { type: "stdio" },
        packageArguments: [
          { type: "positional", value: "serve" },
          {
            type: "named",
            name: "--workdir",
            description: "A folder to expose, as ALIAS=PATH (read-only) or ALIAS=PATH:rw (read-write). Repeat for more.",
            isRequired: true,
            isRepeated: true,
            format: "string",
            placeholder: "docs=~/docs",
          },
        ],
      },
      ...[...bundles].map(([target, bytes]) => ({
        registryType: "mcpb",
        identifier: releaseDownloadUrl(m, bundleName(target)),
        version: m.version,
        fileSha256: createHash("sha256").update(bytes).digest("hex"),
        transport: { type: "stdio" },
      })),
    ],
  };
}

/** Every way `doc` breaks the registry's schema, as "path: message" lines (empty when valid). */
export function serverJsonProblems(doc: unknown): string[] {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(REGISTRY_SCHEMA, "utf8")) as object);
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"}: ${e.message ?? e.keyword}`);
}
