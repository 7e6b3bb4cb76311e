// The two per-file calls of a search scan besides open and close: what the open file is (type,
// size, links) and its first bytes. A search makes them for every file it visits, tens of
// thousands per call, so on Linux they are direct syscalls into reused buffers (statx, read):
// node:fs's fstatSync builds a Stats object per call and readSync validates its arguments, which
// together cost a search's first call ~6% of its CPU and left garbage for the collector. Elsewhere,
// and where statx is refused (kernels before 4.11, seccomp filters that predate it), node:fs.
import fs from "node:fs";
import { IS_LINUX } from "../os.ts";
import { readInto, statFacts, type OpenFileFacts } from "./linux.ts";
import { SysError } from "./sys-error.ts";

export type { OpenFileFacts };

export interface ScanIo {
  /** Type, size and link count of an open descriptor, into `out` (fstat semantics). */
  facts(fd: number, out: OpenFileFacts): void;
  /** Read a freshly opened file's first `len` bytes into buf[0, len): the byte count. */
  readHead(fd: number, buf: Uint8Array, len: number): number;
}

const portable: ScanIo = {
  facts(fd, out) {
    const st = fs.fstatSync(fd);
    out.regular = st.isFile();
    out.size = st.size;
    out.nlink = st.nlink;
  },
  readHead: (fd, buf, len) => fs.readSync(fd, buf, 0, len, 0),
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
  readHead: readInto,
};

export const scanIo: ScanIo = IS_LINUX ? linux : portable;
