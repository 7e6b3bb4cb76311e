// The two per-file calls of a search scan besides open and close: what the open file is (type,
// size, links) and its bytes. A search makes them for every file it visits, tens of thousands
// per call, so on Linux they are direct syscalls into reused buffers (statx, pread): node:fs's
// fstatSync builds a Stats object per call and readSync validates its arguments, which together
// cost a search's first call ~6% of its CPU and left garbage for the collector. Elsewhere, and
// where statx is refused (kernels before 4.11, seccomp filters that predate it), node:fs. Every
// read of a scan goes through readAt, the first buffer and the rest alike, so a file's bytes
// arrive one way whatever part of the file they are.
import fs from "node:fs";
import { IS_LINUX } from "../os.ts";
import { preadInto, statFacts, type OpenFileFacts } from "./linux.ts";
import { SysError } from "./sys-error.ts";

export type { OpenFileFacts };

export interface ScanIo {
  /** Type, size and link count of an open descriptor, into `out` (fstat semantics). */
  facts(fd: number, out: OpenFileFacts): void;
  /** Read `len` bytes at file offset `pos` into buf[off, off + len) (pread semantics): the byte count, 0 at the end. */
  readAt(fd: number, buf: Uint8Array, off: number, len: number, pos: number): number;
}

const portable: ScanIo = {
  facts(fd, out) {
    const st = fs.fstatSync(fd);
    out.regular = st.isFile();
    out.size = st.size;
    out.nlink = st.nlink;
  },
  readAt: (fd, buf, off, len, pos) => fs.readSync(fd, buf, off, len, pos),
};

let statxRefused = false;

const linux: ScanIo = {
  facts(fd, out) {
    if (statxRefused) return portable.facts(fd, out);
    try {
      statFacts(fd, out);
    } catch (err) {
      if (!(err instanceof SysError) || (err.code !== "ENOSYS" && err.code !== "EPERM")) throw err;
      statxRefused = true;
      portable.facts(fd, out);
    }
  },
  readAt: preadInto,
};

export const scanIo: ScanIo = IS_LINUX ? linux : portable;
