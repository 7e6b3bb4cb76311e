// The names of the temp files serverfs writes beside a target before publishing it
// (./publish.ts): `.serverfs-tmp-<pid>-<start>-<space>-<random>`, where pid, start and space are
// the writing process's stamp (platform/fs/process-stamp.ts: its pid, its start time, and the pid
// space both are counted in) and random is 12 hex digits. The name alone says whose temp it is, so
// a temp left by a writer that died (SIGKILL, power loss) can be told from one a live writer is
// still filling, and swept (./temp-sweep.ts). On an OS that cannot tell, and in every name of an
// older layout (`.serverfs-tmp-<16 hex>`), there is no owner: such a temp is never swept.
// Every spelling starts with the reserved prefix, so the path policy hides and refuses it.
import { randomBytes } from "node:crypto";
import { ownStamp, type ProcessStamp } from "../../platform/fs/process-stamp.ts";
import { RESERVED_TEMP_PREFIX } from "./policy.ts";

const OWNED = /^\.serverfs-tmp-([1-9][0-9]{0,9})-([0-9][0-9.]{0,39})-([0-9a-f]{8})-[0-9a-f]{12}$/;

/** A fresh temp name for this process. */
export function tempName(): string {
  const own = ownStamp();
  if (own === null) return `${RESERVED_TEMP_PREFIX}${randomBytes(8).toString("hex")}`;
  return `${RESERVED_TEMP_PREFIX}${own.pid}-${own.start}-${own.space}-${randomBytes(6).toString("hex")}`;
}

/** The owner a temp name records, or null for a name without one (another layout, not a temp). */
export function tempOwner(name: string): ProcessStamp | null {
  const m = OWNED.exec(name);
  if (m === null) return null;
  const pid = Number(m[1]);
  return Number.isSafeInteger(pid) ? { pid, start: m[2]!, space: m[3]! } : null;
}
