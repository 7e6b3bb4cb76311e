// The Agent Bridge as a client sees it: is the socket there and ours, does it accept a
// connection, who answers (the socket file's owner, the pid the Bridge reports and that
// process's uid), and does it run this version. A socket file that refuses connections is a
// stale leftover of a Bridge that died; no socket at all means the Bridge is down.
import fs from "node:fs";
import { bridgeClientFor } from "../../bridge/ipc/connect.ts";
import { probeSocket } from "../../bridge/ipc/probe.ts";
import { errnoCode, ServerfsError } from "../../errors.ts";
import { VERSION } from "../../version.ts";
import { bridgeConfigIdentity, bridgeSettingsIdentity } from "../../config/bridge-identity.ts";
import type { Registry } from "../../config/types.ts";
import type { Result } from "../../bridge/rpc/methods.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";
import { IS_LINUX, IS_WINDOWS } from "../../../platform/os.ts";
import { bridgeCommands } from "../bridge-commands.ts";

const CONNECT_TIMEOUT_MS = 2000;

async function connectProbe(socketPath: string): Promise<"live" | "refused" | "timeout" | "error"> {
  const probe = await probeSocket(socketPath, CONNECT_TIMEOUT_MS);
  if (probe.outcome === "error") return probe.code === "ECONNREFUSED" ? "refused" : "error";
  return probe.outcome === "connected" ? "live" : "timeout";
}

/** Linux: the real uid of a process, from /proc. null where it cannot be measured. */
function uidOfPid(pid: number): number | null {
  if (!IS_LINUX) return null;
  try {
    const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

const DELEGATE_HINT =
  "give the Bridge a cgroup of its own: run it as `serverfs service install` sets it up (Delegate=yes), or under `systemd-run --user --scope -p Delegate=yes`; see docs/platform.md, \"Stop\"";

/** What the running Bridge's stop proofs rest on. A Linux Bridge without task cgroups is a WARN. */
export function stopProofCheck(report: unknown): CheckResult {
  const r = report as { path?: unknown; reason?: unknown } | null | undefined;
  const reason = typeof r?.reason === "string" ? r.reason.slice(0, 300) : "no reason given";
  if (r?.path === "cgroup") return ok("bridge.stop_proof", "stop proof", `cgroup: ${reason}; a stop is proved by the task's empty cgroup`);
  if (r?.path === "job") return ok("bridge.stop_proof", "stop proof", `Job Object: ${reason}`);
  if (r?.path === "freeze") {
    const detail = `freeze-first: ${reason}; every member is stopped before it is killed`;
    return IS_LINUX ? warn("bridge.stop_proof", "stop proof", detail, DELEGATE_HINT) : ok("bridge.stop_proof", "stop proof", detail);
  }
  return warn("bridge.stop_proof", "stop proof", "the Bridge did not say (an older version?)", "restart the Bridge so it runs this version");
}

/**
 * Whether the running Bridge loaded the configuration doctor reads now. A Bridge started before an
 * edit of its workdirs or [agent] section refuses submits (AGENT_BRIDGE_CONFIG_STALE) until it is
 * restarted; doctor says so before a task does.
 */
export function configIdentityCheck(status: { config_identity?: unknown; settings_identity?: unknown }, registry: Registry): CheckResult {
  const reported = status.config_identity;
  if (reported === bridgeConfigIdentity(registry)) {
    if (status.settings_identity === bridgeSettingsIdentity(registry)) {
      return ok("bridge.config", "bridge configuration", "the Bridge runs the configuration this file describes");
    }
    return warn(
      "bridge.config",
      "bridge configuration",
      "the Bridge runs this file's workdirs and runtimes, but older [agent] timeouts or caps: the edit applies once the Bridge restarts",
      "restart the Bridge: serverfs service stop, then serverfs service start (or stop and start serverfs bridge --config FILE by hand)",
    );
  }
  if (typeof reported !== "string") {
    return warn("bridge.config", "bridge configuration", "the Bridge did not say which configuration it runs (an older version?)", "restart the Bridge so it runs this version");
  }
  return fail(
    "bridge.config",
    "bridge configuration",
    "the Bridge runs another configuration than this file (its workdirs or [agent] section changed since it started); agent tools answer AGENT_BRIDGE_CONFIG_STALE until it is restarted",
    "restart the Bridge: serverfs service stop, then serverfs service start (or stop and start serverfs bridge --config FILE by hand)",
  );
}

export async function bridgeChecks(ctx: DoctorContext): Promise<CheckResult[]> {
  const { socketPath } = ctx.paths;
  const out: CheckResult[] = [];
  let ownerText = "";
  if (!IS_WINDOWS) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(socketPath);
    } catch (err) {
      if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") {
        ctx.bridge = { state: "down" };
        return [fail("bridge.socket", "bridge", `not running (no socket at ${socketPath})`, `start the Bridge: ${bridgeCommands(ctx).start}; agent tools answer AGENT_BRIDGE_UNAVAILABLE until then`)];
      }
      ctx.bridge = { state: "unsafe" };
      return [fail("bridge.socket", "bridge", `${socketPath} cannot be inspected (${errnoCode(err) ?? "error"})`, "give the Bridge user access to its socket directory")];
    }
    if (!st.isSocket()) {
      ctx.bridge = { state: "unsafe" };
      return [fail("bridge.socket", "bridge", `${socketPath} exists but is not a socket`, "remove whatever occupies the socket path, then start the Bridge")];
    }
    if (ctx.uid !== null && st.uid !== ctx.uid) {
      ctx.bridge = { state: "unsafe" };
      return [
        fail(
          "bridge.socket",
          "bridge",
          `the socket is owned by uid ${st.uid}, not ${ctx.uid}`,
          "run doctor (and serve) as the Bridge's user; never connect to another user's Bridge",
        ),
      ];
    }
    const probe = await connectProbe(socketPath);
    if (probe === "refused") {
      ctx.bridge = { state: "stale" };
      return [
        fail(
          "bridge.socket",
          "bridge",
          `stale socket: ${socketPath} exists but refuses connections (the Bridge that made it is gone)`,
          `start the Bridge: ${bridgeCommands(ctx).start}; a starting Bridge replaces a stale socket of its own user by itself`,
        ),
      ];
    }
    if (probe !== "live") {
      ctx.bridge = { state: "unresponsive" };
      return [fail("bridge.socket", "bridge", `the socket did not accept a connection (${probe})`, `restart the Bridge: ${bridgeCommands(ctx).restart}`)];
    }
    ownerText = `socket owned by uid ${st.uid}`;
  }

  const client = bridgeClientFor(ctx.registry, { timeoutMs: Math.min(ctx.registry.agent.bridge_timeout_seconds * 1000, 5000) });
  let status: Result<"bridge.status">;
  try {
    status = await client.call("bridge.status", {});
  } catch (err) {
    const code = err instanceof ServerfsError ? err.code : "INTERNAL_ERROR";
    ctx.bridge = { state: code === "AGENT_BRIDGE_UNAVAILABLE" ? "down" : "unresponsive" };
    if (code === "PEER_NOT_AUTHORIZED") {
      return [fail("bridge.socket", "bridge", "the Bridge refused this user (PEER_NOT_AUTHORIZED)", "run doctor as the user the Bridge runs as")];
    }
    return [fail("bridge.socket", "bridge", `connected, but bridge.status failed: ${code}`, `restart the Bridge (${bridgeCommands(ctx).restart}) and look at its log`)];
  }
  const version = typeof status.version === "string" ? status.version.slice(0, 64) : null;
  const pid = typeof status.pid === "number" && Number.isInteger(status.pid) ? status.pid : null;
  ctx.bridge = { state: "up", version, pid, call: (method, params) => client.call(method, params) };
  out.push(ok("bridge.socket", "bridge", `reachable; ${typeof status.active_tasks === "number" ? status.active_tasks : "?"} active task(s)`));

  const pidUid = pid !== null ? uidOfPid(pid) : null;
  if (pidUid !== null && ctx.uid !== null && pidUid !== ctx.uid) {
    out.push(fail("bridge.identity", "bridge identity", `the Bridge process ${pid} runs as uid ${pidUid}, not ${ctx.uid}`, "stop that process; run the Bridge as the user that owns the deployment"));
  } else {
    const parts = [ownerText, pid !== null ? `Bridge pid ${pid}${pidUid !== null ? ` runs as uid ${pidUid}` : ""}` : "Bridge did not report its pid"];
    parts.push("the Bridge accepted this user's kernel-measured uid");
    out.push(ok("bridge.identity", "bridge identity", parts.filter(Boolean).join("; ")));
  }
  out.push(stopProofCheck(status.stop_proof));
  out.push(configIdentityCheck(status, ctx.registry));
  if (version === VERSION) out.push(ok("bridge.version", "bridge version", version));
  else {
    out.push(
      fail(
        "bridge.version",
        "bridge version",
        `the Bridge runs serverfs ${version ?? "(unknown)"}, this binary is ${VERSION}`,
        `restart the Bridge so it runs this version: ${bridgeCommands(ctx).restart}`,
      ),
    );
  }
  return out;
}
