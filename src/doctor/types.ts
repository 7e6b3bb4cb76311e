// What a doctor check reports. One result is one line of the text report and one element of
// the JSON document's `checks`; a FAIL always carries a hint that says what to do next.

export type CheckStatus = "OK" | "WARN" | "FAIL";

export interface CheckResult {
  /** Stable machine id, dotted: `workdir.docs.root`, `bridge.socket`, `acp.opencode.handshake`. */
  id: string;
  /** What the text report prints before the colon. */
  label: string;
  status: CheckStatus;
  detail: string;
  /** What to do next. Always present on FAIL, optional on WARN. */
  hint?: string;
}

export function ok(id: string, label: string, detail: string): CheckResult {
  return { id, label, status: "OK", detail };
}

export function warn(id: string, label: string, detail: string, hint?: string): CheckResult {
  return hint === undefined ? { id, label, status: "WARN", detail } : { id, label, status: "WARN", detail, hint };
}

/** A FAIL without a next step is not allowed: the type makes `hint` mandatory here. */
export function fail(id: string, label: string, detail: string, hint: string): CheckResult {
  return { id, label, status: "FAIL", detail, hint };
}

export interface DoctorReport {
  version: string;
  platform: string;
  checks: CheckResult[];
  summary: { fail: number; warn: number };
}

export function summarize(checks: readonly CheckResult[]): { fail: number; warn: number } {
  let failCount = 0;
  let warnCount = 0;
  for (const c of checks) {
    if (c.status === "FAIL") failCount++;
    else if (c.status === "WARN") warnCount++;
  }
  return { fail: failCount, warn: warnCount };
}
