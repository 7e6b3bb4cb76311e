// The real Bridge service (store, leases, guard, events, interactions, redaction, containment)
// with the runtime families under test registered, wired by the production daemon wiring
// (test/support/bridge-rig.ts) and driven through its RPC dispatch: the ACP and native suites use
// the same core, which proves it needs no runtime-specific changes.
import { expect } from "bun:test";
import fs from "node:fs";
import type { AcpProfile, AgentConfig, Registry } from "../../src/config/types.ts";
import { acpRuntimeFamily } from "../../src/runtimes/acp/index.ts";
import type { Diagnostics } from "../../src/runtimes/kernel/turn-support.ts";
import type { RuntimeAdapter, RuntimeServices } from "../../src/runtimes/types.ts";
import { startServiceRig, type ServiceRig as BaseRig } from "../support/bridge-rig.ts";
import { agentConfig } from "../support/registry.ts";

export { pidAlive, processesWithHome, waitUntil } from "../support/proc.ts";
export { tempDir } from "../support/temp.ts";

export class RecordingDiagnostics implements Diagnostics {
  readonly records: Array<{ kind: string; fields: Record<string, unknown> }> = [];
  record(kind: string, fields: Record<string, string | number | boolean | null>): void {
    this.records.push({ kind, fields });
  }
}

/** The [agent] settings these suites start from: the Agent on, every runtime off, no proxy. */
export function testAgentConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return agentConfig({
    enabled: true,
    task_timeout_seconds: 600,
    interaction_timeout_seconds: 600,
    codex: { enabled: false, bin: "codex", use_proxy: false },
    ...overrides,
  });
}

export type Family = (registry: Registry, services: (runtime: string) => RuntimeServices, options: unknown, diagnostics: RecordingDiagnostics) => RuntimeAdapter[];

export interface ServiceRig extends BaseRig {
  diagnostics: RecordingDiagnostics;
}

async function startRuntimeRig(tempPrefix: string, family: Family, runtimes: string[], agent: Partial<AgentConfig>, waitForDefaultMs: number, oneTaskAtATime: boolean): Promise<ServiceRig> {
  const diagnostics = new RecordingDiagnostics();
  const rig = await startServiceRig({
    tempPrefix,
    runtimes,
    // Everything testAgentConfig sets, so only the families under test run.
    agent: { ...testAgentConfig(), ...agent },
    adapters: (registry, services) => new Map(family(registry, services, {}, diagnostics).map((a) => [a.name, a])),
    waitForDefaultMs,
    oneTaskAtATime,
  });
  return Object.assign(rig, { diagnostics });
}

/** The ACP runtime family with these profiles, each one allowed on the workdir. */
export function startAcpRig(profiles: AcpProfile[], agent: Partial<AgentConfig> = {}): Promise<ServiceRig> {
  return startRuntimeRig("serverfs-acp-bridge-", acpRuntimeFamily, profiles.map((p) => p.runtime), { acp_profiles: profiles, ...agent }, Number.POSITIVE_INFINITY, false);
}

/** One native runtime family (Codex, Claude, Qoder); its tasks run one at a time. */
export function startNativeRig(family: Family, runtimes: string[], agent: Partial<AgentConfig>): Promise<ServiceRig> {
  return startRuntimeRig("serverfs-native-bridge-", family, runtimes, agent, Number.POSITIVE_INFINITY, true);
}

export type Pending = { request_id: string; kind: string; payload: Record<string, unknown> };

/** Wait until the task asks a human (`status`), failing the test if it ended or erred instead. */
export async function waitInteraction(rig: ServiceRig, id: string, status: string, timeoutMs: number): Promise<Pending> {
  const t = await rig.waitFor(id, (v) => v.status === status || ["failed", "succeeded", "cancelled", "interrupted"].includes(v.status as string), timeoutMs);
  expect({ status: t.status, error: t.error_code }).toEqual({ status, error: null });
  return t.pending_request as Pending;
}

/** A 0600 provider env file (the way an operator hands provider settings to the Bridge). */
export function writeProviderEnv(file: string, vars: Record<string, string>): void {
  fs.writeFileSync(file, `${Object.entries(vars).map(([k, v]) => `${k}=${v}`).join("\n")}\n`, { mode: 0o600 });
}
