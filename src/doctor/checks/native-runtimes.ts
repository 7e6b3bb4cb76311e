// Native runtimes (codex, claude, qoder) that are enabled: the executable is found (an absolute
// path, or a bare name on PATH) and answers `--version` within a bound, run in a containment set
// whose whole tree is stopped afterwards. Each is followed by what its own settings mean for
// approvals (native-approvals.ts).
import type { NativeRuntimeName } from "../../config/types.ts";
import { NATIVE_RUNTIMES } from "../../config/runtime-catalog.ts";
import { lookupExecutable } from "../../config/executable.ts";
import { boundedRun, printableLine } from "../bounded-run.ts";
import type { DoctorContext } from "../context.ts";
import { approvalsCheck } from "./native-approvals.ts";
import { fail, ok, type CheckResult } from "../types.ts";

export const VERSION_TIMEOUT_MS = 10_000;
const NATIVE = NATIVE_RUNTIMES;

/** The Bridge's own lookup (config/executable.ts), worded for the operator. */
function resolveBin(bin: string): { file: string } | { why: string } {
  const found = lookupExecutable(bin);
  if ("file" in found) return found;
  switch (found.problem) {
    case "not_on_path":
      return { why: `'${bin}' is not on PATH` };
    case "missing":
      return { why: `${bin} does not exist` };
    case "directory":
    case "not_file":
      return { why: `${bin} is not a regular file` };
    case "not_executable":
      return { why: `${bin} is not executable by this user` };
  }
}

async function checkOne(ctx: DoctorContext, name: NativeRuntimeName): Promise<CheckResult> {
  const cfg = ctx.registry.agent[name];
  const id = `runtime.${name}`;
  const label = `runtime ${name}`;
  const where = resolveBin(cfg.bin);
  if ("why" in where) {
    return fail(id, label, where.why, `install ${name} for the Bridge user, or set agent.${name}.bin to its absolute path, or disable agent.${name}`);
  }
  const run = await boundedRun([where.file, "--version"], VERSION_TIMEOUT_MS);
  if (run.evidence !== null && !run.evidence.proved) {
    return fail(
      id,
      label,
      `${where.file} --version left ${run.evidence.survivors.length} process(es) that could not be proved stopped`,
      `find and stop them (pids ${run.evidence.survivors.map((s) => s.pid).join(", ")}); check what ${name} starts on --version`,
    );
  }
  if (run.outcome === "spawn-failed") {
    return fail(id, label, `${where.file} could not be started`, `check that ${where.file} is a working executable for this user`);
  }
  if (run.outcome === "timeout") {
    return fail(
      id,
      label,
      `${where.file} --version did not finish within ${VERSION_TIMEOUT_MS / 1000} s (process tree stopped)`,
      `run '${where.file} --version' as the Bridge user and fix what it waits for (a login prompt, an update check)`,
    );
  }
  if (run.exitCode !== 0) {
    return fail(id, label, `${where.file} --version exited with ${run.exitCode}`, `run '${where.file} --version' as the Bridge user and fix what it reports`);
  }
  const version = printableLine(run.stdout) || "(printed no version)";
  return ok(id, label, `${where.file}: ${version}${cfg.use_proxy ? "; routed through the agent proxy" : ""}`);
}

export async function nativeRuntimeChecks(ctx: DoctorContext): Promise<CheckResult[]> {
  const enabled = NATIVE.filter((n) => ctx.registry.agent[n].enabled);
  const results = await Promise.all(enabled.map(async (n) => [await checkOne(ctx, n), approvalsCheck(ctx.registry, n)]));
  return results.flat();
}
