// How failures seen on an ACP connection become ServerfsErrors. Agent error messages and data may
// quote host paths, prompts or credentials, so none of their text is ever forwarded: the public
// error names the JSON-RPC code and the method, and the agent's own text goes to the bounded
// private diagnostics only.
import * as acp from "@agentclientprotocol/sdk";
import { ServerfsError } from "../../errors.ts";

/** JSON-RPC code the ACP spec reserves for "authentication required". */
export const AUTH_REQUIRED_CODE = -32000;

export function rpcCodeOf(err: unknown): number | null {
  if (err instanceof acp.RequestError) return err.code;
  if (err && typeof err === "object" && "code" in err && typeof (err as { code: unknown }).code === "number") {
    return (err as { code: number }).code;
  }
  return null;
}

/**
 * An agent refusing to open a session because it is not signed in: the reserved code, or an
 * error that hands back the auth methods to use (some agents answer -32603 with `data.authMethods`).
 */
export function isAuthRefusal(err: unknown): boolean {
  if (rpcCodeOf(err) === AUTH_REQUIRED_CODE) return true;
  if (err instanceof acp.RequestError && err.data && typeof err.data === "object") {
    return Array.isArray((err.data as { authMethods?: unknown }).authMethods);
  }
  return false;
}

export function authRequired(): ServerfsError {
  return new ServerfsError(
    "AGENT_AUTH_REQUIRED",
    "the agent needs authentication: sign in with the agent's own tool as the Bridge user, then retry",
  );
}

/** A request the agent answered with a JSON-RPC error. */
export function agentRefused(method: string, err: unknown): ServerfsError {
  const code = rpcCodeOf(err);
  return new ServerfsError(
    "AGENT_PROVIDER_ERROR",
    `the agent answered ${method} with an error${code === null ? "" : ` (JSON-RPC ${code})`}`,
    code === null ? { method } : { method, rpc_code: code },
  );
}

export function protocolError(why: string): ServerfsError {
  return new ServerfsError("AGENT_ACP_PROTOCOL_ERROR", `the agent broke the ACP protocol: ${why}`);
}
