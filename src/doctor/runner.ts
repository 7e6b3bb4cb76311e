// The doctor's order of work: version and platform, the configuration (stop here with exit 2
// when it is invalid), each workdir, then — with the Agent Bridge enabled — the state
// directory, the database, the provider env file, the Bridge, recovery guards, runtimes, ACP
// profiles (and their live probe on request) and the proxy. Every check is read-only.
import { loadRegistry, type LoadInput } from "../config/load.ts";
import { ServerfsError } from "../errors.ts";
import { createFileService, type FileService } from "../fs/index.ts";
import { VERSION } from "../version.ts";
import { acpCommandCheck, acpSnapshotCheck } from "./checks/acp-profiles.ts";
import { acpProviderCheck, providerEnvKeys } from "./checks/acp-provider.ts";
import { approvalsCheck } from "./checks/approvals.ts";
import { bridgeChecks } from "./checks/bridge.ts";
import { nativeRuntimeChecks } from "./checks/native-runtimes.ts";
import { providerEnvFileCheck } from "./checks/provider-env-file.ts";
import { proxyCheck } from "./checks/proxy.ts";
import { recoveryGuardChecks } from "./checks/recovery-guards.ts";
import { stateDatabaseCheck } from "./checks/state-database.ts";
import { stateDirChecks } from "./checks/state-dir.ts";
import { platformText, versionChecks } from "./checks/version.ts";
import { overlapChecks } from "./checks/workdir-overlap.ts";
import { caseCheck, filesystemCheck, listingCheck, rootCheck, writeCheck } from "./checks/workdir.ts";
import { DoctorContext, type DoctorOptions } from "./context.ts";
import { fail, ok, summarize, type CheckResult, type DoctorReport } from "./types.ts";

export const EXIT_CLEAN = 0;
export const EXIT_FAIL = 1;
export const EXIT_CONFIG = 2;

export interface DoctorOutcome {
  report: DoctorReport;
  exitCode: number;
}

function finish(checks: CheckResult[], exitCode?: number): DoctorOutcome {
  const summary = summarize(checks);
  const report: DoctorReport = { version: VERSION, platform: platformText(), checks, summary };
  return { report, exitCode: exitCode ?? (summary.fail > 0 ? EXIT_FAIL : EXIT_CLEAN) };
}

const KEY_HINT = "fix the named key and run doctor again (render-config and serve validate the same way)";
const FILE_HINT = "correct the file where the message says and run doctor again";

/**
 * One FAIL per problem. A problem that names its own fix (`...; fix: make it readable by this
 * user`) keeps it as the hint; one about a key says to fix that key; one about the file itself
 * (its syntax, its encoding) is not about any key, so the hint does not pretend it is.
 */
function configFailures(err: unknown): CheckResult[] {
  if (err instanceof ServerfsError && err.code === "CONFIGURATION_ERROR") {
    const problems = Array.isArray(err.details?.problems) ? (err.details.problems as unknown[]).filter((p): p is string => typeof p === "string") : [];
    const keyed = Array.isArray(err.details?.keyed) ? (err.details.keyed as unknown[]) : [];
    const lines = problems.length > 0 ? problems : [err.message];
    return lines.map((line, i) => {
      const at = line.lastIndexOf("; fix: ");
      if (at >= 0) return fail("config", "config", `CONFIGURATION_ERROR: ${line.slice(0, at)}`, line.slice(at + "; fix: ".length));
      return fail("config", "config", `CONFIGURATION_ERROR: ${line}`, keyed[i] === false ? FILE_HINT : KEY_HINT);
    });
  }
  const code = err instanceof ServerfsError ? err.code : "INTERNAL_ERROR";
  return [fail("config", "config", `${code}: the configuration could not be loaded`, FILE_HINT)];
}

export async function runDoctor(input: LoadInput, options: DoctorOptions): Promise<DoctorOutcome> {
  const checks: CheckResult[] = versionChecks();
  let loaded;
  try {
    loaded = await loadRegistry(input);
  } catch (err) {
    checks.push(...configFailures(err));
    return finish(checks, EXIT_CONFIG);
  }
  const { registry, source } = loaded;
  const rw = registry.workdirs.filter((w) => !w.read_only).length;
  checks.push(
    ok(
      "config",
      "config",
      `${source.file ?? "(command line)"} (${source.format}; ${registry.workdirs.length} workdir(s), ${rw} read-write; Agent Bridge ${registry.agent.enabled ? "enabled" : "disabled"})`,
    ),
  );

  const ctx = new DoctorContext(registry, source, options);
  let files: FileService | null = null;
  try {
    for (const [index, w] of registry.workdirs.entries()) {
      const root = rootCheck(w, index);
      checks.push(root.result);
      if (!root.usable) continue;
      const fsys = await filesystemCheck(w);
      checks.push(fsys.result);
      checks.push(caseCheck(w));
      files ??= createFileService(registry);
      checks.push(await listingCheck(files, w, registry.limits.max_list_entries));
      checks.push(writeCheck(w, fsys.mount));
    }
    files?.close();
    files = null;
    checks.push(...overlapChecks(registry, loaded.keyName));

    if (!registry.agent.enabled) {
      checks.push(ok("agent", "agent bridge", "disabled ([agent] enabled = false): no state, Bridge, runtime or proxy checks"));
      return finish(checks);
    }
    checks.push(...stateDirChecks(ctx));
    checks.push(stateDatabaseCheck(ctx));
    const envFile = providerEnvFileCheck(ctx);
    if (envFile) checks.push(envFile);
    checks.push(...(await bridgeChecks(ctx)));
    checks.push(...(await recoveryGuardChecks(ctx)));
    const [natives, proxy] = await Promise.all([nativeRuntimeChecks(ctx), proxyCheck(ctx)]);
    checks.push(...natives);
    checks.push(approvalsCheck(registry));
    // Key names only, read once for every profile (the provider env file's values are never read out).
    const envKeys = providerEnvKeys(registry);
    for (const [index, profile] of registry.agent.acp_profiles.entries()) {
      checks.push(acpCommandCheck(profile, index));
      checks.push(acpSnapshotCheck(ctx, profile));
      checks.push(acpProviderCheck(profile, envKeys));
    }
    if (options.probeAcp) {
      if (registry.agent.acp_profiles.length === 0) checks.push(ok("acp.probe", "acp probe", "no ACP profiles configured"));
      else {
        // The SDK is loaded only when asked for: the plain doctor stays fast.
        const { acpProbe } = await import("./checks/acp-probe.ts");
        const results = await Promise.all(registry.agent.acp_profiles.map((p) => acpProbe(ctx, p)));
        for (const r of results) checks.push(...r);
      }
    }
    checks.push(proxy);
    return finish(checks);
  } finally {
    files?.close();
    ctx.close();
  }
}
