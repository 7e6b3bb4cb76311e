// The two renderings of one report. Text: one `label: STATUS -- detail` line per check (a FAIL
// adds `; fix: <what to do>` on the same line, so `grep FAIL` shows the remedy too), then
// `summary: N FAIL, M WARN`. JSON: the same content as one stable document.
import type { CheckResult, DoctorReport } from "./types.ts";

/** One line stays one line: control characters (a newline in a configured path) are escaped. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

export function formatLine(c: CheckResult): string {
  const hint = c.hint !== undefined ? `; ${c.status === "FAIL" ? "fix" : "note"}: ${c.hint}` : "";
  return oneLine(`${c.label}: ${c.status} -- ${c.detail}${hint}`);
}

export function formatText(report: DoctorReport): string {
  const lines = report.checks.map(formatLine);
  lines.push(`summary: ${report.summary.fail} FAIL, ${report.summary.warn} WARN`);
  return `${lines.join("\n")}\n`;
}

export function formatJson(report: DoctorReport): string {
  const checks = report.checks.map((c) => {
    const entry: Record<string, string> = { id: c.id, label: c.label, status: c.status, detail: c.detail };
    if (c.hint !== undefined) entry.hint = c.hint;
    return entry;
  });
  return `${JSON.stringify({ version: report.version, platform: report.platform, checks, summary: report.summary }, null, 2)}\n`;
}
