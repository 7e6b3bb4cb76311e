import { createFlockLeases } from "../posix/flock-lease.ts";
import type { LeaseProvider } from "../types.ts";
import { errno, linuxLibc } from "./libc.ts";

const EWOULDBLOCK = 11;

export function createLinuxLeases(): LeaseProvider {
  return createFlockLeases({
    flock: (fd, op) => linuxLibc().flock(fd, op),
    errno,
    wouldBlock: EWOULDBLOCK,
  });
}
