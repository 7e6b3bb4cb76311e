// `serverfs://<workdir>/<path>` URIs: built for download results and parsed for the resource
// template. Each path segment is percent-encoded on its own so '/' stays a separator and a
// space becomes %20. Parsing is done by hand: WHATWG URL parsing would treat the alias as a host
// (and may normalise it), while an alias is a case-sensitive name.
import { ServerfsError } from "../errors.ts";

export const URI_SCHEME = "serverfs://";
export const RESOURCE_URI_TEMPLATE = "serverfs://{workdir}/{path}";

export function resourceUri(workdir: string, path: string): string {
  const encodedPath = path.split("/").map(encodeURIComponent).join("/");
  return `${URI_SCHEME}${encodeURIComponent(workdir)}/${encodedPath}`;
}

export function parseResourceUri(uri: string): { workdir: string; path: string } {
  if (!uri.startsWith(URI_SCHEME)) {
    throw new ServerfsError("INVALID_ARGUMENT", "resource URI must start with serverfs://");
  }
  const rest = uri.slice(URI_SCHEME.length);
  if (rest.includes("?") || rest.includes("#")) {
    throw new ServerfsError("INVALID_ARGUMENT", "resource URI must not have a query or fragment");
  }
  const slash = rest.indexOf("/");
  const rawWorkdir = slash === -1 ? rest : rest.slice(0, slash);
  const rawPath = slash === -1 ? "" : rest.slice(slash + 1);
  try {
    return { workdir: decodeURIComponent(rawWorkdir), path: rawPath.split("/").map(decodeURIComponent).join("/") };
  } catch {
    throw new ServerfsError("INVALID_ARGUMENT", "resource URI has malformed percent-encoding");
  }
}
