// The variables an ACP agent child gets on top of the Bridge's scrubbed provider environment
// (which TaskContext.spawn supplies): the private provider env file, then the proxy variables
// when the profile routes through the Agent proxy, then a per-task temp directory. Later layers
// win; nothing a task caller sends reaches this function.
import { isScrubbedName } from "../../../platform/env.ts";
import type { ProxyConfig } from "../../config/types.ts";
import { readProviderEnvFile } from "./provider-env.ts";

export interface ChildEnvInput {
  providerEnvFile: string | null;
  proxy: ProxyConfig;
  useProxy: boolean;
  /** Per-task temp directory (already created, 0700). */
  tmpDir: string;
}

export function childEnvExtras(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  if (input.providerEnvFile !== null) Object.assign(env, readProviderEnvFile(input.providerEnvFile));
  if (input.useProxy && input.proxy.enabled && input.proxy.url !== null) {
    const noProxy = input.proxy.no_proxy.join(",");
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) env[name] = input.proxy.url;
    env.NO_PROXY = noProxy;
    env.no_proxy = noProxy;
  }
  // Agents drop sockets, extracted libraries and logs into the temp dir; Claude Code ignores
  // TMPDIR and reads CLAUDE_CODE_TMPDIR instead (acp-client-findings §8 item 14).
  env.TMPDIR = input.tmpDir;
  env.CLAUDE_CODE_TMPDIR = input.tmpDir;
  if (process.platform === "win32") {
    env.TEMP = input.tmpDir;
    env.TMP = input.tmpDir;
  }
  // The file is verbatim operator data, but it cannot re-add what no child may have (README §4)
  // nor forge the per-task run marker the crash sweep relies on.
  for (const name of Object.keys(env)) if (isScrubbedName(name)) delete env[name];
  return env;
}
