// macOS peer identity: getpeereid(2) for uid/gid, getsockopt(SOL_LOCAL, LOCAL_PEERPID) for the pid.
import { ptr } from "bun:ffi";
import type { PeerIdentity } from "../types.ts";
import { libSystem } from "./libsystem.ts";

const SOL_LOCAL = 0;
const LOCAL_PEERPID = 2;

export function darwinPeerCredentials(fd: number): PeerIdentity {
  const none: PeerIdentity = { uid: null, gid: null, pid: null };
  if (!Number.isInteger(fd) || fd < 0) return none;
  const sys = libSystem();
  const uid = new Uint32Array(1);
  const gid = new Uint32Array(1);
  if (sys.getpeereid(fd, ptr(uid), ptr(gid)) !== 0) return none;
  const pid = new Int32Array(1);
  const length = new Uint32Array([4]);
  const gotPid = sys.getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, ptr(pid), ptr(length)) === 0 && pid[0]! > 0;
  return { uid: uid[0]!, gid: gid[0]!, pid: gotPid ? pid[0]! : null };
}
