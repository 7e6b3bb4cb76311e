// What a scan produces and what paces it: shared by the scanner (scan.ts), its regex and context
// parts (scan-regex.ts, scan-context.ts), the batch loop and the worker protocol, so none of them
// imports another for a type.

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
  text_truncated?: true;
  before?: (string | null)[];
  after?: (string | null)[];
  context_truncated?: true;
}

/** A match with the file offset just past its line, for the NUL cut and context merging. */
export interface FileMatch extends SearchMatch {
  lineEndAbs: number;
}

/** The walk's clock (WalkClock): tick() throws past the deadline and says when to pause. */
export interface Pace {
  tick(): boolean;
  pause(): Promise<void>;
}
