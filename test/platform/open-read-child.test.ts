// linuxNative.openReadChild (search's per-file open) refuses and accepts exactly what
// openBeneath(dirFd, [name], "read") does, with the kernel resolver and with the O_NOFOLLOW walk
// of kernels without openat2: a plain file opens (and reads its own bytes), a symlink of any kind
// is refused, a FIFO opens without blocking, and with openat2 even a multi-component or absolute
// name cannot leave the directory. (The walk takes single components only, which is all search
// passes: names read from the directory, never "." or "..".)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forceResolver } from "../../platform/fs/linux.ts";
import { linuxNative } from "../../platform/fs/resolve-linux.ts";
import { mkfifo } from "../fs/helpers.ts";

const linux = process.platform === "linux";

/** The fd's bytes, or the errno name the open threw. */
function outcome(open: () => number): string {
  let fd: number;
  try {
    fd = open();
  } catch (err) {
    return `error ${(err as { code?: string }).code}`;
  }
  try {
    const st = fs.fstatSync(fd);
    return st.isFile() ? `file ${fs.readFileSync(fd, "utf8")}` : st.isFIFO() ? "fifo" : st.isDirectory() ? "directory" : "other";
  } finally {
    fs.closeSync(fd);
  }
}

for (const mode of ["openat2", "walk"] as const) {
  describe.skipIf(!linux)(`openReadChild (${mode})`, () => {
    let base = "";
    let dirFd = -1;
    beforeAll(() => {
      forceResolver(mode);
      base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-readchild-"));
      const root = path.join(base, "root");
      fs.mkdirSync(path.join(root, "sub"), { recursive: true });
      fs.writeFileSync(path.join(base, "outside.txt"), "OUTSIDE");
      fs.writeFileSync(path.join(root, "plain.txt"), "inside");
      fs.writeFileSync(path.join(root, "sub", "deep.txt"), "deep");
      fs.symlinkSync("plain.txt", path.join(root, "link-in"));
      fs.symlinkSync(path.join(base, "outside.txt"), path.join(root, "link-out"));
      fs.symlinkSync("nowhere", path.join(root, "dangling"));
      mkfifo(path.join(root, "fifo"));
      dirFd = linuxNative.openRoot(root);
    });
    afterAll(() => {
      linuxNative.closeFast(dirFd);
      forceResolver(null);
      fs.rmSync(base, { recursive: true, force: true });
    });

    test("same answer as openBeneath(..., \"read\") for every kind of name", () => {
      const escapes = ["../outside.txt", "/etc/passwd", "sub/../../outside.txt"];
      const names = ["plain.txt", "link-in", "link-out", "dangling", "fifo", "sub", "missing", ...(mode === "openat2" ? escapes : [])];
      const seen = names.map((n) => [n, outcome(() => linuxNative.openReadChild!(dirFd, n))]);
      expect(seen).toEqual(names.map((n) => [n, outcome(() => linuxNative.openBeneath(dirFd, [n], "read"))]));
      const byName = Object.fromEntries(seen);
      expect(byName["plain.txt"]).toBe("file inside");
      expect(byName.fifo).toBe("fifo");
      for (const n of ["link-in", "link-out", "dangling"]) expect(byName[n]).toStartWith("error ");
      if (mode === "openat2") for (const n of escapes) expect(byName[n]).toStartWith("error ");
      expect(byName.missing).toBe("error ENOENT");
    });
  });
}
