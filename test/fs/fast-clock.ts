// A clock that runs fast, for the tests that prove a file scan gives the event loop back. Scans
// yield once they have held the thread for 25 ms by performance.now() (src/fs/read.ts, walk.ts);
// how long a real 8 MB scan takes depends on the machine, so under withFastClock every read of
// the clock is MS_PER_READ later than the one before (on top of real time): each check the scan
// makes finds its 25 ms spent and yields, however fast the machine. loopTurnsDuring counts the
// event-loop turns other callbacks got while an operation was still unfinished.

/** More than the 25 ms yield line: every clock check the scan makes is a yield. */
const MS_PER_READ = 30;

export async function withFastClock<T>(fn: () => Promise<T>): Promise<T> {
  const real = performance.now;
  let ahead = 0;
  performance.now = () => real.call(performance) + (ahead += MS_PER_READ);
  try {
    return await fn();
  } finally {
    performance.now = real;
  }
}

/** Await `op`, counting the turns a re-arming setImmediate callback got before it settled. */
export async function loopTurnsDuring<T>(op: Promise<T>): Promise<{ result: T; count: number }> {
  let settled = false;
  let count = 0;
  const turn = () => {
    if (settled) return;
    count++;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const result = await op;
    return { result, count };
  } finally {
    settled = true;
  }
}
