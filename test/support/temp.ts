// Temp dirs for every test: real directories under the OS temp dir (short names: unix socket
// paths under them have a length limit), resolved through symlinks
// (containment compares real paths), each removed when the test process exits at the latest.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const made: string[] = [];
process.on("exit", () => {
  for (const d of made) {
    try {
      fs.rmSync(d, { recursive: true, force: true });
    } catch {
      // still a mount point, or busy: the exit is no place to fail a run
    }
  }
});

export function tempDir(prefix = "sfs-test-"): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(d);
  return d;
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Remove every temp dir made so far (for an afterAll that wants the disk back early). */
export function cleanupTempDirs(): void {
  for (const d of made.splice(0)) removeDir(d);
}
