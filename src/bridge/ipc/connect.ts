// How every local caller (serve's agent tools, `serverfs tasks`, `service status`, doctor) reaches
// the Bridge of a deployment: the endpoint derives from the registry, and on Windows the per-user
// token is read (never created) from the private state dir. One place, so no caller can forget
// the token or read it differently.
import type { Registry } from "../../config/types.ts";
import { deploymentPaths, type DeploymentRef } from "../../config/paths.ts";
import { readBridgeToken } from "../../../platform/token.ts";
import { osKindOf, PLATFORM_NAME } from "../../../platform/os.ts";
import { BridgeClient, DEFAULT_TIMEOUT_MS } from "./client.ts";

export interface ConnectOptions {
  /** Per-call timeout; default: the deployment's `bridge_timeout_seconds`. */
  timeoutMs?: number;
  /** Platform override for tests. */
  platform?: NodeJS.Platform;
}

/** `registry` may be just `{server: {state_dir}}` (the default deployment); then give timeoutMs. */
export function bridgeClientFor(
  registry: Registry | DeploymentRef,
  options: ConnectOptions = {},
): BridgeClient {
  const paths = deploymentPaths(registry);
  const timeoutMs =
    options.timeoutMs ?? ("agent" in registry ? registry.agent.bridge_timeout_seconds * 1000 : DEFAULT_TIMEOUT_MS);
  return new BridgeClient({ path: paths.socketPath, pipeToken: pipeTokenFor(paths.stateDir, options.platform) }, timeoutMs);
}

/**
 * The token a Windows client presents; null elsewhere. A missing or unsafe token file is not an
 * error here: the Bridge then refuses the connection, and that refusal is what the caller reports.
 */
function pipeTokenFor(stateDir: string, platform: NodeJS.Platform = PLATFORM_NAME): string | null {
  if (osKindOf(platform) !== "windows") return null;
  try {
    return readBridgeToken(stateDir);
  } catch {
    return null;
  }
}
