// The variables an ACP agent child gets on top of the Bridge's provider environment (which
// TaskContext.spawn supplies: the Bridge's own environment, scrubbed, plus the private provider
// env file): the proxy variables when the profile routes through the Agent proxy, then a per-task
// temp directory. Nothing a task caller sends reaches this function.
import type { ProxyConfig } from "../../config/types.ts";

export interface ChildEnvInput {
  proxy: ProxyConfig;
  useProxy: boolean;
  /** Per-task temp directory (already created, 0700). */
  tmpDir: string;
}

export function childEnvExtras(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
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
  return env;
}
