// What serve says about itself when a connection opens: the SDK server is built from these
// (server.ts), and the opening answered before the SDK is loaded (opening.ts) says the same.
import { VERSION } from "../version.ts";
import { SERVER_INSTRUCTIONS } from "./instructions.ts";

export const SERVER_INFO = { name: "serverfs", title: "serverfs", version: VERSION } as const;

/** A fresh object each time: the SDK keeps (and may merge into) the one it is given. */
export function serverCapabilities(): { tools: Record<string, never>; resources: Record<string, never> } {
  return { tools: {}, resources: {} };
}

export { SERVER_INSTRUCTIONS };
