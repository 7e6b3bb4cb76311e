import { createFlockLeases } from "../posix/flock-lease.ts";
import type { LeaseProvider } from "../types.ts";
import { darwinErrno, libSystem } from "./libsystem.ts";

const EWOULDBLOCK = 35;

export function createDarwinLeases(): LeaseProvider {
  return createFlockLeases({
    flock: (fd, op) => libSystem().flock(fd, op),
    errno: darwinErrno,
    wouldBlock: EWOULDBLOCK,
  });
}
