// `--probe-acp`: for each ACP profile, a bounded `initialize` + `session/new` against the real
// agent, in a throwaway directory outside every workdir (removed afterwards), through the same
// connection code the ACP adapter uses (AcpPeer), with the same client capabilities and the same
// child environment a task would get. The agent's whole process tree is then stopped and the
// proof reported. Nothing the agent says is printed unbounded, and none of its error text at all
// (it may quote paths or tokens).
import * as acp from "@agentclientprotocol/sdk";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { containment } from "../../../platform/index.ts";
import type { ContainedProcess, StopEvidence } from "../../../platform/types.ts";
import { isWithin } from "../../../platform/paths.ts";
import { providerEnvironment } from "../../runtimes/kernel/provider-env.ts";
import type { AcpProfile } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";
import { snapshotFrom } from "../../runtimes/acp/capabilities.ts";
import { childEnvExtras } from "../../runtimes/kernel/child-env.ts";
import { AcpPeer } from "../../runtimes/acp/connection.ts";
import { CANCELLED_OUTCOME } from "../../runtimes/acp/permissions.ts";
import { isAuthRefusal } from "../../runtimes/acp/protocol-errors.ts";
import { closeChildInput } from "../../runtimes/kernel/child-input.ts";
import { CLIENT_CAPABILITIES, CLIENT_INFO } from "../../runtimes/acp/turn.ts";
import { CANCEL_RESPONSE } from "../../runtimes/acp/elicitation.ts";
import { doctorRunId, printableLine } from "../bounded-run.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";
import { removeTree } from "../../../platform/fs/remove-tree.ts";

/** How long a politely closed agent gets to exit by itself before the containment stop. */
const POLITE_EXIT_MS = 1000;


/** A fresh private directory that is not inside any workdir root (real paths compared). */
function throwawayDir(ctx: DoctorContext): string | null {
  const roots = ctx.registry.workdirs.map((w) => {
    try {
      return fs.realpathSync(w.path);
    } catch {
      return w.path;
    }
  });
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-doctor-acp-")));
  if (roots.some((r) => isWithin(dir, r))) {
    removeTree(dir);
    return null;
  }
  return dir;
}

function text(value: unknown, max = 80): string | null {
  return typeof value === "string" ? printableLine(value, max) || null : null;
}

function describeCaps(init: acp.InitializeResponse): string {
  const caps = (init.agentCapabilities ?? {}) as Record<string, unknown>;
  const prompt = (caps.promptCapabilities ?? {}) as Record<string, unknown>;
  const session = (caps.sessionCapabilities && typeof caps.sessionCapabilities === "object" ? caps.sessionCapabilities : {}) as Record<string, unknown>;
  const promptKinds = ["image", "audio", "embeddedContext"].filter((k) => prompt[k] === true);
  const sessionKinds = Object.keys(session)
    .filter((k) => session[k] !== null && session[k] !== undefined)
    .map((k) => printableLine(k, 32))
    .slice(0, 8);
  const mcp = (caps.mcpCapabilities ?? {}) as Record<string, unknown>;
  const mcpKinds = ["http", "sse"].filter((k) => mcp[k] === true);
  return [
    `loadSession=${caps.loadSession === true ? "yes" : "no"}`,
    `session capabilities: ${sessionKinds.length > 0 ? sessionKinds.join(", ") : "none"}`,
    `prompt: text${promptKinds.length > 0 ? `, ${promptKinds.join(", ")}` : ""}`,
    `mcp: stdio${mcpKinds.length > 0 ? `, ${mcpKinds.join(", ")}` : ""}`,
  ].join("; ");
}

function describeAuth(init: acp.InitializeResponse): string {
  const methods = Array.isArray(init.authMethods) ? init.authMethods : [];
  if (methods.length === 0) return "auth methods: none";
  const names = methods.slice(0, 6).map((m) => text((m as { name?: unknown }).name, 40) ?? text((m as { id?: unknown }).id, 40) ?? "?");
  return `auth methods: ${names.join(", ")}${methods.length > 6 ? ", ..." : ""}`;
}

function stopResult(id: string, label: string, evidence: StopEvidence | null): CheckResult {
  if (evidence === null) return ok(id, label, "nothing was started");
  if (evidence.proved) return ok(id, label, `process tree stopped, proved (${evidence.method}, ${Math.round(evidence.elapsedMs)} ms)`);
  return fail(
    id,
    label,
    `${evidence.survivors.length} process(es) of the agent could not be proved stopped (pids ${evidence.survivors.map((s) => s.pid).join(", ")})`,
    "stop them by hand; an agent whose tree cannot be stopped would keep its workdir guarded after every task",
  );
}

export async function acpProbe(ctx: DoctorContext, profile: AcpProfile): Promise<CheckResult[]> {
  const base = `acp.${profile.id}`;
  const L = (what: string) => `acp ${profile.id} ${what}`;
  const out: CheckResult[] = [];
  let env: Record<string, string>;
  try {
    env = providerEnvironment(ctx.registry.agent.provider_env_file).env;
  } catch (err) {
    const code = err instanceof ServerfsError ? err.code : "INTERNAL_ERROR";
    return [fail(`${base}.handshake`, L("handshake"), `not probed: the provider env file is unusable (${code})`, "fix the provider env file first (see its check above)")];
  }
  const dir = throwawayDir(ctx);
  if (dir === null) {
    return [warn(`${base}.handshake`, L("handshake"), "not probed: the temp directory lies inside a workdir", "set TMPDIR to a directory outside every workdir and run doctor again")];
  }
  let proc: ContainedProcess | null = null;
  let peer: AcpPeer | null = null;
  const timeoutMs = profile.probe_timeout_seconds * 1000;
  try {
    try {
      proc = await containment().spawn({
        argv: [profile.command, ...profile.args],
        cwd: dir,
        env: { ...env, ...childEnvExtras({ proxy: ctx.registry.agent.proxy, useProxy: profile.use_proxy, tmpDir: dir, tmpDirVariables: profile.tmpdir_env ?? [] }) },
        runId: doctorRunId(),
        stderrLimitBytes: 16 * 1024,
      });
    } catch {
      out.push(fail(`${base}.handshake`, L("handshake"), "the agent could not be started (AGENT_ACP_LAUNCH_FAILED)", "check the command and args of this profile by running them as the Bridge user"));
      return out;
    }
    peer = new AcpPeer(
      proc,
      {
        onSessionUpdate: () => {},
        onPermissionRequest: async () => CANCELLED_OUTCOME,
        // The probe never runs a turn, so no human is there to ask.
        onElicitation: async () => CANCEL_RESPONSE,
        onRefusedRequest: () => {},
        onActivity: () => {},
        onDiagnostic: () => {},
      },
      () => new ServerfsError("AGENT_ACP_LAUNCH_FAILED", "the agent exited or closed its output"),
    );
    let init: acp.InitializeResponse;
    try {
      init = await peer.request(
        acp.methods.agent.initialize,
        { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: CLIENT_CAPABILITIES, clientInfo: CLIENT_INFO },
        {
          timeoutMs,
          onTimeout: () => new ServerfsError("AGENT_ACP_LAUNCH_FAILED", "no answer to initialize in time"),
          mapError: () => new ServerfsError("AGENT_ACP_PROTOCOL_UNSUPPORTED", "initialize refused"),
        },
      );
    } catch (err) {
      const code = err instanceof ServerfsError ? err.code : "AGENT_ACP_PROTOCOL_ERROR";
      const why =
        code === "AGENT_ACP_LAUNCH_FAILED" && err instanceof ServerfsError && err.message.includes("in time")
          ? `no answer to initialize within ${profile.probe_timeout_seconds} s`
          : code === "AGENT_ACP_PROTOCOL_UNSUPPORTED"
            ? "the agent refused initialize for ACP protocol version 1"
            : code === "AGENT_ACP_PROTOCOL_ERROR"
              ? "the agent's stdout is not clean ACP (JSON-RPC) traffic"
              : "the agent exited before answering initialize";
      out.push(fail(`${base}.handshake`, L("handshake"), `${why} (${code})`, "run the profile's command by hand as the Bridge user and check that it speaks ACP on stdio"));
      return out;
    }
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
      const offered = typeof init.protocolVersion === "number" ? String(init.protocolVersion) : "no number";
      out.push(
        fail(
          `${base}.handshake`,
          L("handshake"),
          `the agent answered protocol version ${offered}; serverfs speaks ACP v${acp.PROTOCOL_VERSION} only (AGENT_ACP_PROTOCOL_UNSUPPORTED)`,
          "install an agent release that supports ACP protocol version 1, or remove this profile",
        ),
      );
      return out;
    }
    const info = (init.agentInfo ?? null) as { name?: unknown; version?: unknown } | null;
    const agent = [text(info?.name, 64), text(info?.version, 32)].filter((v) => v !== null).join(" ") || "unnamed agent";
    out.push(ok(`${base}.handshake`, L("handshake"), `ACP v${init.protocolVersion}; ${agent}; ${describeCaps(init)}; ${describeAuth(init)}`));

    let sessionResponse: { configOptions?: unknown } | null = null;
    let authNeeded = false;
    let sessionFailure: string | null = null;
    try {
      sessionResponse = await peer.request(
        acp.methods.agent.session.new,
        { cwd: dir, mcpServers: [] },
        {
          timeoutMs,
          onTimeout: () => new ServerfsError("AGENT_PROVIDER_ERROR", "no answer in time"),
          mapError: (e) => {
            if (isAuthRefusal(e)) authNeeded = true;
            return new ServerfsError(isAuthRefusal(e) ? "AGENT_AUTH_REQUIRED" : "AGENT_PROVIDER_ERROR", "session/new refused");
          },
        },
      );
    } catch (err) {
      sessionFailure = err instanceof ServerfsError ? err.code : "AGENT_PROVIDER_ERROR";
      if (err instanceof ServerfsError && err.message.includes("in time")) sessionFailure = `no answer within ${profile.probe_timeout_seconds} s`;
    }
    const snap = snapshotFrom(init, sessionResponse);
    const continuation = snap.resume_session ? "session/resume" : snap.load_session ? "session/load" : "none (continue_from_task_id is refused)";
    if (authNeeded) {
      out.push(
        fail(
          `${base}.session`,
          L("session"),
          `auth required: the agent refused session/new until it is signed in (AGENT_AUTH_REQUIRED); ${describeAuth(init)}`,
          "sign in with the agent's own tool as the Bridge user (or put its API key in the provider env file), then run doctor --probe-acp again",
        ),
      );
    } else if (sessionFailure !== null) {
      out.push(fail(`${base}.session`, L("session"), `session/new failed: ${sessionFailure}`, "run the agent by hand as the Bridge user and look at what it reports"));
    } else {
      out.push(
        ok(
          `${base}.session`,
          L("session"),
          `session/new answered; auth required: no; continuation: ${continuation}; ${snap.models.length} model(s) offered`,
        ),
      );
    }
    return out;
  } finally {
    // Runs after every return above: the stop result is appended to the very array returned, so
    // no path (handshake failure included) reports without the proof that the agent is gone.
    peer?.close();
    let evidence: StopEvidence | null = null;
    if (proc !== null) {
      closeChildInput(proc);
      await Promise.race([proc.exited, Bun.sleep(POLITE_EXIT_MS)]);
      evidence = await proc.stop(profile.shutdown_timeout_seconds * 1000);
    }
    if (proc !== null) out.push(stopResult(`${base}.stop`, L("stop"), evidence));
    removeTree(dir);
  }
}
