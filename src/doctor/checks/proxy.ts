// The agent proxy: when enabled, a TCP connect to its host:port within a bound. The URL is
// credentialless by construction (the loader refuses user:password@ and the .env credential
// keys), so printing host:port shows nothing secret.
import net from "node:net";
import { NATIVE_RUNTIMES } from "../../config/runtime-catalog.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, type CheckResult } from "../types.ts";

export const PROXY_CONNECT_TIMEOUT_MS = 3000;

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<{ ok: true; ms: number } | { ok: false; why: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (r: { ok: true; ms: number } | { ok: false; why: string }) => {
      clearTimeout(timer);
      s.removeAllListeners();
      s.on("error", () => {});
      s.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ ok: false, why: `no connection within ${timeoutMs / 1000} s` }), timeoutMs);
    s.once("connect", () => done({ ok: true, ms: Math.round(performance.now() - started) }));
    s.once("error", (err) => done({ ok: false, why: (err as { code?: string }).code ?? "connection failed" }));
  });
}

export async function proxyCheck(ctx: DoctorContext): Promise<CheckResult> {
  const proxy = ctx.registry.agent.proxy;
  const users = NATIVE_RUNTIMES.filter((n) => ctx.registry.agent[n].enabled && ctx.registry.agent[n].use_proxy);
  const acpUsers = ctx.registry.agent.acp_profiles.filter((p) => p.use_proxy).map((p) => p.runtime);
  const routed = [...users, ...acpUsers];
  if (!proxy.enabled || proxy.url === null) {
    return ok("proxy", "agent proxy", `disabled${routed.length > 0 ? ` (${routed.join(", ")} ask for it and run without one)` : ""}`);
  }
  const u = new URL(proxy.url);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const port = Number(u.port);
  const r = await tcpConnect(host, port, PROXY_CONNECT_TIMEOUT_MS);
  const who = routed.length > 0 ? `used by ${routed.join(", ")}` : "no enabled runtime routes through it";
  if (r.ok) return ok("proxy", "agent proxy", `${u.hostname}:${port} reachable in ${r.ms} ms; auth=none; ${who}`);
  return fail(
    "proxy",
    "agent proxy",
    `${u.hostname}:${port} is not reachable (${r.why}); ${who}`,
    "start the proxy or fix agent.proxy.url; agents routed through it cannot reach their providers meanwhile",
  );
}
