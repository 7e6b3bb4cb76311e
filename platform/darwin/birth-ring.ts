// The fork watcher's thread hands its records to the main thread through one SharedArrayBuffer:
// a single-writer, single-reader ring of fixed-size records. The main thread reads it
// synchronously when it looks at a task, so a record written before the look began is always seen.
// A full ring drops the record and counts the drop: a lost record only loses a link, and
// TaskLineage then counts that link's orphans as uncertain (never as proved gone).
import type { Birth } from "./lineage.ts";

const HEAD = 0;
const TAIL = 1;
const DROPPED = 2;
const HEADER_INTS = 4;
const FIELDS = 5;

export interface BirthRing {
  readonly buffer: SharedArrayBuffer;
  readonly capacity: number;
}

export function createBirthRing(capacity: number): BirthRing {
  const bytes = HEADER_INTS * 4 + capacity * FIELDS * 8;
  return { buffer: new SharedArrayBuffer(bytes), capacity };
}

function views(ring: BirthRing): { header: Int32Array; records: BigInt64Array } {
  return {
    header: new Int32Array(ring.buffer, 0, HEADER_INTS),
    records: new BigInt64Array(ring.buffer, HEADER_INTS * 4, ring.capacity * FIELDS),
  };
}

/** The writing end (the watcher thread). */
export function ringWriter(ring: BirthRing): (birth: Birth) => boolean {
  const { header, records } = views(ring);
  return (birth) => {
    const head = Atomics.load(header, HEAD);
    if (((head - Atomics.load(header, TAIL)) | 0) >= ring.capacity) {
      Atomics.add(header, DROPPED, 1);
      return false;
    }
    const at = (head >>> 0) % ring.capacity * FIELDS;
    records[at] = BigInt(birth.pid);
    records[at + 1] = BigInt.asIntN(64, birth.unique);
    records[at + 2] = BigInt.asIntN(64, birth.parentUnique);
    records[at + 3] = BigInt(birth.version);
    records[at + 4] = BigInt(birth.parentVersion);
    // Published only once the record is whole: the reader never reads past HEAD.
    Atomics.store(header, HEAD, (head + 1) | 0);
    return true;
  };
}

/** The reading end (the main thread): every record published so far, and the drop count. */
export function ringReader(ring: BirthRing): () => { births: Birth[]; dropped: number } {
  const { header, records } = views(ring);
  return () => {
    const head = Atomics.load(header, HEAD);
    let tail = Atomics.load(header, TAIL);
    const births: Birth[] = [];
    while (tail !== head) {
      const at = (tail >>> 0) % ring.capacity * FIELDS;
      births.push({
        pid: Number(records[at]),
        unique: BigInt.asUintN(64, records[at + 1]!),
        parentUnique: BigInt.asUintN(64, records[at + 2]!),
        version: Number(records[at + 3]),
        parentVersion: Number(records[at + 4]),
      });
      tail = (tail + 1) | 0;
    }
    Atomics.store(header, TAIL, tail);
    return { births, dropped: Atomics.load(header, DROPPED) };
  };
}
