// The variables a provider child (ACP agent or native runtime) gets on top of the Bridge's provider environment (which
// TaskContext.spawn supplies: the Bridge's own environment, scrubbed, plus the private provider
// env file): the proxy variables when the profile routes through the Agent proxy, then a per-task
// temp directory. Nothing a task caller sends reaches this function.
import type { ProxyConfig } from "../../config/types.ts";
import { IS_WINDOWS } from "../../../platform/os.ts";

export interface ChildEnvInput {
  proxy: ProxyConfig;
  useProxy: boolean;
  /** Per-task temp directory (already created, 0700). */
  tmpDir: string;
  /** Variables besides TMPDIR the provider reads its temp directory from (its own knowledge). */
  tmpDirVariables?: readonly string[];
}

export function childEnvExtras(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  if (input.useProxy && input.proxy.enabled && input.proxy.url !== null) {
    const noProxy = input.proxy.no_proxy.join(",");
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) env[name] = input.proxy.url;
    env.NO_PROXY = noProxy;
    env.no_proxy = noProxy;
  }
  // Agents drop sockets, extracted libraries and logs into the temp dir. Some ignore TMPDIR for a
  // variable of their own: the runtime (or the ACP profile) that knows it names it.
  env.TMPDIR = input.tmpDir;
  for (const name of input.tmpDirVariables ?? []) env[name] = input.tmpDir;
  if (IS_WINDOWS) {
    env.TEMP = input.tmpDir;
    env.TMP = input.tmpDir;
  }
  return env;
}
