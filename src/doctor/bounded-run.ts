// Run a short-lived command (`<runtime> --version`) in a containment set with a deadline, keep a
// bounded prefix of its stdout, and stop the whole tree afterwards with proof. Nothing here ever
// goes through a shell.
import os from "node:os";
import { randomBytes } from "node:crypto";
import { containment, scrubEnv } from "../../platform/index.ts";
import type { StopEvidence } from "../../platform/types.ts";

export interface BoundedRun {
  outcome: "exited" | "timeout" | "spawn-failed";
  exitCode: number | null;
  stdout: string;
  evidence: StopEvidence | null;
}

const MAX_STDOUT = 4096;

async function readPrefix(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.length;
    }
  } catch {
    // the stream broke: keep what arrived
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(Math.min(total, limit));
  let at = 0;
  for (const c of chunks) {
    const take = Math.min(c.length, out.length - at);
    out.set(c.subarray(0, take), at);
    at += take;
    if (at >= out.length) break;
  }
  return out;
}

export function doctorRunId(): string {
  return `doctor_${randomBytes(8).toString("hex")}`;
}

export async function boundedRun(argv: string[], timeoutMs: number, graceMs = 500): Promise<BoundedRun> {
  let proc;
  try {
    proc = await containment().spawn({ argv, cwd: os.tmpdir(), env: scrubEnv(process.env), runId: doctorRunId(), stderrLimitBytes: 4096 });
  } catch {
    return { outcome: "spawn-failed", exitCode: null, stdout: "", evidence: null };
  }
  try {
    proc.stdin.end();
  } catch {
    // nothing to close
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const stdoutPromise = readPrefix(proc.stdout, MAX_STDOUT);
  const first = await Promise.race([proc.exited.then(() => "exited" as const), deadline]);
  clearTimeout(timer);
  const evidence = await proc.stop(graceMs);
  const bytes = await Promise.race([stdoutPromise, Bun.sleep(200).then(() => new Uint8Array())]);
  const exitCode = first === "exited" ? await proc.exited : null;
  return { outcome: first, exitCode, stdout: new TextDecoder().decode(bytes), evidence };
}

/** A line an external program printed, made safe to show: one line, printable, bounded. */
export function printableLine(text: string, max = 120): string {
  const line = (text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "").trim();
  // eslint-disable-next-line no-control-regex
  const clean = line.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
