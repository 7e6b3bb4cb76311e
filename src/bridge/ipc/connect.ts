// How every local caller (serve's agent tools, `serverfs tasks`, `service status`, doctor) reaches
// the Bridge of a deployment: the endpoint derives from the registry, and on Windows the per-user
// token is read (never created) from the private state dir, once per call, for the handshake that
// proves both ends hold it (./handshake.ts). One place, so no caller can forget the token or read
// it differently.
import type { Registry } from "../../config/types.ts";
import { deploymentPaths, type DeploymentRef } from "../../config/paths.ts";
import { readBridgeTokenIfPresent } from "../../../platform/token.ts";
import { ServerfsError } from "../../errors.ts";
import { osKindOf, PLATFORM_NAME } from "../../../platform/os.ts";
import { BridgeClient, DEFAULT_TIMEOUT_MS } from "./client.ts";
import { bridgeStartHint } from "./start-hint.ts";

export interface ConnectOptions {
  /** Per-call timeout; default: the deployment's `bridge_timeout_seconds`. */
  timeoutMs?: number;
  /** Platform override for tests. */
  platform?: NodeJS.Platform;
  /** The operator's config file, named in the start hint on the command line (never in MCP answers). */
  configFile?: string;
}

/** `registry` may be just `{server: {state_dir}}` (the default deployment); then give timeoutMs. */
export function bridgeClientFor(
  registry: Registry | DeploymentRef,
  options: ConnectOptions = {},
): BridgeClient {
  const paths = deploymentPaths(registry);
  const timeoutMs =
    options.timeoutMs ?? ("agent" in registry ? registry.agent.bridge_timeout_seconds * 1000 : DEFAULT_TIMEOUT_MS);
  const startHint = bridgeStartHint(options.configFile ?? null);
  return new BridgeClient({ path: paths.socketPath, pipeToken: pipeTokenFor(paths.stateDir, startHint, options.platform), startHint }, timeoutMs);
}

/**
 * How a Windows client gets its token; null elsewhere. Read per call, so a client made before the
 * Bridge first started still reaches it. No token file yet means no Bridge has ever run here:
 * AGENT_BRIDGE_UNAVAILABLE. An unsafe or malformed one is refused with its own code
 * (STATE_DIRECTORY_UNSAFE, BRIDGE_IDENTITY_UNAVAILABLE) and nothing is sent anywhere.
 */
function pipeTokenFor(stateDir: string, startHint: string, platform: NodeJS.Platform = PLATFORM_NAME): (() => string) | null {
  if (osKindOf(platform) !== "windows") return null;
  return () => {
    const token = readBridgeTokenIfPresent(stateDir);
    if (token === null) throw new ServerfsError("AGENT_BRIDGE_UNAVAILABLE", `Agent Bridge is not reachable (it has not created its token yet); fix: ${startHint}`);
    return token;
  };
}
