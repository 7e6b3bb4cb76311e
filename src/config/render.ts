// The normalized private Bridge document: the registry plus a document_version, as canonical
// JSON (keys sorted recursively, arrays in configured order, two-space indent, trailing
// newline). It holds no secret (the registry never does: the proxy is credentialless and the
// provider env file appears only as its path) and nothing that depends on which source format
// the operator used, so the same deployment renders to the same bytes from TOML and from .env.
import { canonicalJsonPretty } from "../common/canonical-json.ts";
import type { Registry } from "./types.ts";

export const DOCUMENT_VERSION = 1;

export function renderDocument(registry: Registry): string {
  return canonicalJsonPretty({ document_version: DOCUMENT_VERSION, ...registry });
}
