// The one handler wrapper: validates a request's params against the method table, fills the
// protocol defaults, and calls the method's typed handler. Errors are the protocol's own:
// METHOD_NOT_FOUND for a name that is not an own key of the table, INVALID_REQUEST naming the key.
import type { Dispatch } from "../ipc/connection.ts";
import { PROTOCOL_DEFAULTS, type BridgeMethod, type HandlerParams, type Result } from "./methods.ts";
import { checkParams } from "./shapes.ts";

export type BridgeHandlers = {
  [M in BridgeMethod]: (params: HandlerParams<M>) => Promise<Result<M>> | Result<M>;
};

/** Identity, so an implementation object is checked against the table where it is written. */
export function defineHandlers(impl: BridgeHandlers): BridgeHandlers {
  return impl;
}

/** A copy of `params` with the method's absent defaulted keys filled; the input is not mutated. */
export function withDefaults(method: BridgeMethod, params: Record<string, unknown>): Record<string, unknown> {
  const defaults: Record<string, unknown> | undefined = Object.hasOwn(PROTOCOL_DEFAULTS, method)
    ? PROTOCOL_DEFAULTS[method as keyof typeof PROTOCOL_DEFAULTS]
    : undefined;
  return defaults ? { ...defaults, ...params } : params;
}

/**
 * The `Dispatch` a connection calls: validate, default, then the typed handler. The connection has
 * already validated a wire request; validating again here (a few hundred ns, see
 * docs/design/bridge-rpc.md) keeps the handler types true for in-process callers too.
 */
export function dispatchTable(handlers: BridgeHandlers): Dispatch {
  return async (method, params) => {
    checkParams(method, params);
    // The table's key ties handler and params together; TypeScript cannot correlate the union.
    const handler = handlers[method] as (p: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>;
    return handler(withDefaults(method, params));
  };
}
