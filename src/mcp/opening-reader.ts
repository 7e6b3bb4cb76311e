// The opening over stdin: frames are cut from the relay's chunks at each newline, as the transport
// cuts them (transport.ts), and handed to the OpeningAnswerer (opening.ts) one by one; its answers
// are written to stdout at once. The opening ends at its first frame the answerer hands over, once
// tools/list is answered, when nothing has come for OPENING_IDLE_MS, or when `end` is called (a
// signal, the end of stdin). `ended` resolves once it has ended and its answers have left the
// process (or OPENING_FLUSH_MS later), so loading the server never holds an answer back.
import { OPENING_FRAME_BYTES, OpeningAnswerer, type OpeningPlan } from "./opening.ts";
import type { StdinRelay } from "./stdin-relay.ts";

/**
 * A host sends its opening frames within a round trip or two of each other; after this long
 * without one the server is loaded anyway, so the start-up work that needs it (root checks, temp
 * sweep, the search thread) is not held up by a host that never sends tools/list. Long enough for
 * a busy host's round trip: loading the server between its initialize and its tools/list would
 * put the load back in front of that tools/list.
 */
export const OPENING_IDLE_MS = 500;
/** How long an ended opening waits for its answers to be written (a client that does not read). */
const OPENING_FLUSH_MS = 200;

export interface Opening {
  /** Resolves once the opening is over and its answers are written. */
  ended: Promise<void>;
  /** End the opening now (idempotent). */
  end: () => void;
  /** The text written for each request answered, by id. */
  answered: ReadonlyMap<string | number, string>;
}

export function answerOpening(relay: StdinRelay, plan: OpeningPlan, stdout: NodeJS.WritableStream): Opening {
  const answerer = new OpeningAnswerer(plan);
  const answered = new Map<string | number, string>();
  let pieces: Buffer[] = [];
  let pending = 0;
  let over = false;
  let writing = 0;
  let idle: ReturnType<typeof setTimeout> | undefined;
  let settle: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const settleIfWritten = (): void => {
    if (over && writing === 0) settle();
  };

  const end = (): void => {
    if (over) return;
    over = true;
    clearTimeout(idle);
    relay.untap();
    setTimeout(settle, OPENING_FLUSH_MS);
    settleIfWritten();
  };
  const rearm = (): void => {
    clearTimeout(idle);
    idle = setTimeout(end, OPENING_IDLE_MS);
  };

  const write = (text: string): void => {
    writing += 1;
    stdout.write(text, () => {
      writing -= 1;
      settleIfWritten();
    });
  };

  relay.tap((chunk) => {
    let start = 0;
    while (!over) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      const frame = pending === 0 ? piece : Buffer.concat([...pieces, piece]);
      pieces = [];
      pending = 0;
      const step = answerer.step(frame);
      if (step.kind === "handover") return end();
      if (step.kind === "answer") {
        answered.set(step.id, step.text);
        write(step.text);
        if (step.method === "tools/list") return end();
      }
      rearm();
    }
    if (over || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (pending + rest.length > OPENING_FRAME_BYTES) return end();
    pieces.push(rest);
    pending += rest.length;
  });
  rearm();
  return { ended, end, answered };
}
