// Workdir checks against real trees: missing root, symlinked root, a file as root, a read-write
// workdir on a read-only mount (a tmpfs mounted ro), and the mountinfo parser's edge cases.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { detectCaseSensitivity } from "../../platform/fs/case-sensitivity.ts";
import { mountFor, parseMountInfo } from "../../platform/fs/mounts-linux.ts";
import { formatLine } from "../../src/doctor/format.ts";
import { cleanupTempDirs } from "../support/temp.ts";
import { makeDeployment, runDoctor, tempDir } from "./helpers.ts";

// Every deployment and temp dir is a test/support temp dir: removed here, or at exit at the latest.
afterAll(cleanupTempDirs);

function deployment(opts: Parameters<typeof makeDeployment>[0] = {}) {
  return makeDeployment({ agentEnabled: false, ...opts });
}

describe("workdir roots", () => {
  test("missing root: FAIL naming the config key, exit 1, and no further checks for that workdir", async () => {
    const d = deployment();
    fs.rmdirSync(d.workdirs.docs!);
    const r = await runDoctor(d);
    expect(r.code).toBe(1);
    expect(r.line("workdir docs root")).toBe(
      `workdir docs root: FAIL -- ${d.workdirs.docs} does not exist; fix: create the directory, or correct workdirs[1].path in the config`,
    );
    expect(r.stdout).not.toContain("workdir docs read");
    expect(r.line("workdir repo read")).toContain("OK");
    expect(r.stdout).toContain("summary: 1 FAIL, 0 WARN");
    expect(fs.existsSync(d.workdirs.docs!)).toBe(false);
  });

  test("symlinked root: FAIL (serve would answer SYMLINK_NOT_ALLOWED), and the link target is not listed", async () => {
    const d = deployment();
    const target = tempDir();
    fs.writeFileSync(path.join(target, "secret.txt"), "x");
    fs.rmdirSync(d.workdirs.docs!);
    fs.symlinkSync(target, d.workdirs.docs!);
    const r = await runDoctor(d);
    expect(r.code).toBe(1);
    expect(r.line("workdir docs root")).toBe(
      `workdir docs root: FAIL -- ${d.workdirs.docs} is a symlink; serve refuses it (SYMLINK_NOT_ALLOWED); fix: set workdirs[1].path to the real directory the link points to`,
    );
    expect(r.stdout).not.toContain("secret.txt");
  });

  test("a regular file as root: FAIL", async () => {
    const d = deployment();
    fs.rmdirSync(d.workdirs.docs!);
    fs.writeFileSync(d.workdirs.docs!, "not a dir");
    const r = await runDoctor(d);
    expect(r.line("workdir docs root")).toContain("is not a directory; fix: point workdirs[1].path at a directory");
  });
});

describe("read-only filesystem under a read-write workdir", () => {
  test("tmpfs mounted ro: filesystem says so, write is FAIL with what to do; a read-only workdir there is fine", async () => {
    if (process.platform !== "linux") return; // mountinfo and mount(8) are Linux-only
    const d = deployment({ aliases: ["repo", "docs"] });
    const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", d.workdirs.repo!]);
    if (mount.exitCode !== 0) {
      console.warn(`skipped: mounting a tmpfs was refused (${mount.stderr.toString().trim()}); needs root or CAP_SYS_ADMIN`);
      return;
    }
    try {
      const r = await runDoctor(d);
      expect(r.code).toBe(1);
      expect(r.line("workdir repo filesystem")).toBe("workdir repo filesystem: OK -- tmpfs, mounted read-only");
      expect(r.line("workdir repo write")).toBe(
        `workdir repo write: FAIL -- the filesystem at ${d.workdirs.repo} is mounted read-only; fix: remount it read-write, or set read_only = true for this workdir`,
      );
      expect(r.line("workdir repo read")).toBe("workdir repo read: OK -- 0 entries visible under policy");
      // Nothing was created on the (read-only) mount or beside it.
      expect(fs.readdirSync(d.workdirs.repo!)).toEqual([]);
      // The same mount is fine for a read-only workdir.
      fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace("read_only = false\n", ""));
      const ro = await runDoctor(d);
      expect(ro.code).toBe(0);
      expect(ro.line("workdir repo write")).toBe("workdir repo write: OK -- not evaluated (read-only workdir)");
    } finally {
      Bun.spawnSync(["umount", d.workdirs.repo!]);
    }
  });
});

describe("how names are matched", () => {
  test("one names line per usable workdir, from the same probe serve runs; none for a missing root", async () => {
    const d = deployment();
    fs.rmdirSync(d.workdirs.docs!);
    const before = fs.readdirSync(d.workdirs.repo!);
    const r = await runDoctor(d);
    const cs = detectCaseSensitivity(d.workdirs.repo!);
    const how = cs.basis === "detected-sensitive" ? "case-sensitively (detected: " : cs.basis === "detected-insensitive" ? "case-insensitively (detected: " : "case-insensitively (unknown, the safe default: ";
    expect(r.line("workdir repo names")).toBe(`workdir repo names: OK -- matched ${how}${cs.reason})`);
    expect(r.stdout).not.toContain("workdir docs names");
    // On this project's CI the temp dir is ext4 or tmpfs without casefold support: an exact answer.
    if (process.platform === "linux") expect(r.line("workdir repo names")).toMatch(/^workdir repo names: OK -- matched case-sensitively \(detected: (ext4|tmpfs)/);
    expect(fs.readdirSync(d.workdirs.repo!)).toEqual(before);
  });
});

describe("mountinfo parsing", () => {
  const sample = [
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
    "40 22 0:35 / /mnt/data rw,relatime shared:2 - xfs /dev/sdb rw",
    "41 40 0:36 / /mnt/data/ro\\040dir ro,relatime - tmpfs tmpfs ro",
    "42 22 0:37 / /mnt/data2 rw - nfs4 server:/x rw",
    "43 40 0:38 / /mnt/data rw - tmpfs tmpfs ro,size=1k",
  ].join("\n");
  const mounts = parseMountInfo(sample);

  test("longest prefix wins, prefixes match whole components, later stacked mounts win, \\040 is a space", () => {
    expect(mountFor("/home/x", mounts)).toEqual({ mountPoint: "/", fsType: "ext4", readOnly: false });
    expect(mountFor("/mnt/data2/y", mounts)?.fsType).toBe("nfs4");
    expect(mountFor("/mnt/datax", mounts)?.fsType).toBe("ext4");
    expect(mountFor("/mnt/data/ro dir/z", mounts)).toEqual({ mountPoint: "/mnt/data/ro dir", fsType: "tmpfs", readOnly: true });
    // The tmpfs stacked on /mnt/data later hides the xfs, and its superblock is read-only.
    expect(mountFor("/mnt/data/q", mounts)).toEqual({ mountPoint: "/mnt/data", fsType: "tmpfs", readOnly: true });
  });

  test("report lines stay single lines: a newline in a configured path is escaped", () => {
    expect(formatLine({ id: "x", label: "workdir a root", status: "FAIL", detail: "/tmp/a\nb does not exist", hint: "fix it" })).toBe(
      "workdir a root: FAIL -- /tmp/a\\x0ab does not exist; fix: fix it",
    );
  });
});
