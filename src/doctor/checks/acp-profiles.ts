// ACP profiles, checked without launching anything: the command is an absolute path to an
// existing regular file this user may execute (the same rule the config loader applies, run
// again because the file can change after the config was written), and the capability snapshot
// the Bridge stored from a real handshake — current, stale (the profile's launch fields changed
// since it was measured) or not measured yet.
import path from "node:path";
import type { AcpProfile } from "../../config/types.ts";
import { executableProblem } from "../../config/executable.ts";
import { parseSnapshot } from "../../runtimes/acp/snapshot.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";

export function acpCommandCheck(profile: AcpProfile, index: number): CheckResult {
  const id = `acp.${profile.id}.command`;
  const label = `acp ${profile.id} command`;
  const problem = path.isAbsolute(profile.command) ? executableProblem(profile.command) : "is not an absolute path";
  if (problem) {
    return fail(id, label, `${profile.command} ${problem}`, `install the agent, or fix agent.acp_profiles[${index}].command (an absolute path to an executable)`);
  }
  return ok(id, label, `${profile.command} (${profile.args.length} argument${profile.args.length === 1 ? "" : "s"}; not launched)`);
}

export function acpSnapshotCheck(ctx: DoctorContext, profile: AcpProfile): CheckResult {
  const id = `acp.${profile.id}.capabilities`;
  const label = `acp ${profile.id} capabilities`;
  const db = ctx.stateDatabase();
  if (db.kind !== "ok") return ok(id, label, "not measured yet (no state database)");
  const rows = db.snapshot.capabilityRows(profile.runtime);
  const current = rows.find((r) => r.profile_fingerprint === profile.fingerprint);
  if (current) {
    const snap = parseSnapshot(current.snapshot_json);
    if (snap === null) {
      return warn(id, label, `stored snapshot from ${current.measured_at} is not readable; treated as unmeasured`, "it is replaced by the next task on this runtime");
    }
    const agent = [snap.agent_name, snap.agent_version].filter((v) => v !== null).join(" ") || "unnamed agent";
    return ok(
      id,
      label,
      `measured ${snap.measured_at}: ACP v${snap.protocol_version}, ${agent}, loadSession=${snap.load_session ? "yes" : "no"}, resume=${snap.resume_session ? "yes" : "no"}, ${snap.models.length} model(s)`,
    );
  }
  if (rows.length > 0) {
    const newest = rows.map((r) => r.measured_at).sort().at(-1) ?? "?";
    return warn(
      id,
      label,
      `stale: the snapshot measured ${newest} was taken with a different command, args or use_proxy; runtime.list reports this profile unmeasured`,
      "it is re-measured by the next task on this runtime (or check the agent now with --probe-acp)",
    );
  }
  return ok(id, label, "not measured yet (measured by the first task on this runtime)");
}
