// The machine-readable last line of a benchmark: `RESULT {json}`, which bench/targets.ts parses
// (its header documents the fields). Everything above that line stays for people.
/** One measured figure: our median against the baseline's, from the same interleaved run. */
export interface Figure {
  ours_ms: number;
  baseline_ms: number;
  ratio: number;
}

const round = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places;

/** From the two medians the benchmark printed (each script keeps its own median rule). */
export function figure(oursMs: number, baselineMs: number): Figure {
  return { ours_ms: round(oursMs, 2), baseline_ms: round(baselineMs, 2), ratio: round(oursMs / baselineMs, 4) };
}

export function printResult(fields: Record<string, unknown>): void {
  console.log(`RESULT ${JSON.stringify(fields)}`);
}

/** The last `RESULT {json}` line of a benchmark's output, or null when it printed none. */
export function parseResult(stdout: string): Record<string, unknown> | null {
  const lines = stdout.split("\n").filter((l) => l.startsWith("RESULT "));
  const last = lines.at(-1);
  if (last === undefined) return null;
  const parsed: unknown = JSON.parse(last.slice("RESULT ".length));
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("RESULT is not a JSON object");
  return parsed as Record<string, unknown>;
}
