// The two renderings of one report. Text: one `label: STATUS -- detail` line per check (a FAIL
// adds `; fix: <what to do>` on the same line, so `grep FAIL` shows the remedy too), then
// `summary: N FAIL, M WARN`. JSON: the same content as one stable document.
import { escapeControls } from "../common/escape.ts";
import type { CheckResult, DoctorReport } from "./types.ts";

/** One line stays one line: what can draw (a newline in a configured path) is escaped. */
function oneLine(text: string): string {
  return escapeControls(text);
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
