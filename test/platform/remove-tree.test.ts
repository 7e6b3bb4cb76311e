// removeTree never follows a link: a scratch tree holding a link to a directory loses the link, and
// the directory it points to keeps every file. Runs everywhere:
// - Linux/macOS: a symlink made with fs.symlinkSync (rmSync works from lstat/unlinkat).
// - Windows under Wine (the Windows lane): Wine cannot create NTFS links, but it follows a Unix
//   symlink made from the Linux side (`start /unix /bin/ln`, a native process) even under
//   FILE_OPEN_REPARSE_POINT. The removal sees the followed link by its handle's path, leaves it and
//   fails with ELOOP; deleting through that handle would have deleted the target.
// - Real Windows (.github/workflows/windows.yml): junctions to a drive path and to a
//   `\\?\Volume{GUID}\` path (the one libuv's lstat reports as a plain directory), directory and
//   file symlinks (mklink), each removed as the link itself.
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { removeTree } from "../../platform/fs/remove-tree.ts";
import { volumeGuidPath } from "./windows-helpers.ts";

const onWindows = process.platform === "win32";
const underWine = onWindows && (await import("../../platform/fs/windows.ts")).underWine();
const realWindows = onWindows && !underWine;

// under Wine on Z: (the Unix root), so the Linux side can name the same files
const base = fs.realpathSync(fs.mkdtempSync(path.join(underWine ? "Z:\\tmp" : os.tmpdir(), "serverfs-rmtree-")));
afterAll(() => {
  if (underWine) unixRun("/bin/rm", ["-rf", unixPath(base)], () => !fs.existsSync(base));
  else fs.rmSync(base, { recursive: true, force: true });
});

/** A target directory with files, outside the tree that is removed. */
function target(name: string): string {
  const dir = path.join(base, name);
  fs.mkdirSync(path.join(dir, "inner"), { recursive: true });
  fs.writeFileSync(path.join(dir, "keep.txt"), "keep\n");
  fs.writeFileSync(path.join(dir, "inner", "deep.txt"), "deep\n");
  return dir;
}

function expectIntact(dir: string): void {
  expect(fs.readFileSync(path.join(dir, "keep.txt"), "utf8")).toBe("keep\n");
  expect(fs.readFileSync(path.join(dir, "inner", "deep.txt"), "utf8")).toBe("deep\n");
}

/** A tree with an ordinary file, a read-only file and a subdirectory, for the link to sit in. */
function box(name: string): string {
  const dir = path.join(base, name);
  fs.mkdirSync(path.join(dir, "sub"), { recursive: true });
  fs.writeFileSync(path.join(dir, "own.txt"), "own\n");
  fs.writeFileSync(path.join(dir, "sub", "ro.txt"), "ro\n");
  fs.chmodSync(path.join(dir, "sub", "ro.txt"), 0o444);
  return dir;
}

/** Wine maps the Unix root to Z: (scripts/windows-lane/run.sh). */
function unixPath(p: string): string {
  return p.replace(/^[Zz]:/, "").replaceAll("\\", "/");
}

/**
 * Run a native Linux program from inside Wine (start /wait /unix), then wait for its effect:
 * `/wait` does not always wait for a program that is not a Windows one (a CI run once listed the
 * directory before `ln` had made its link), so the setup waits until `done()` holds, for at most
 * ten seconds, and fails with its own message if it never does. No assertion waits on a clock.
 */
function unixRun(program: string, args: string[], done: () => boolean): void {
  const r = spawnSync("start.exe", ["/wait", "/unix", program, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`start /unix ${program} exited ${r.status}: ${r.stderr}`);
  for (const end = performance.now() + 10_000; !done(); Bun.sleepSync(10)) {
    if (performance.now() > end) throw new Error(`start /unix ${program}: its effect never appeared`);
  }
}

function mklink(args: string[]): void {
  const r = spawnSync("cmd.exe", ["/d", "/c", "mklink", ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mklink ${args.join(" ")} exited ${r.status}: ${r.stdout}${r.stderr}`);
}

describe.skipIf(onWindows)("removeTree on POSIX", () => {
  test("a symlink to a directory and one to a file are removed as links, their targets keep every file", () => {
    const t = target("posix-target");
    const b = box("posix-box");
    fs.symlinkSync(t, path.join(b, "dir-link"));
    fs.symlinkSync(path.join(t, "keep.txt"), path.join(b, "sub", "file-link"));
    removeTree(b);
    expect(fs.existsSync(b)).toBe(false);
    expectIntact(t);
  });

  test("a top that is itself a symlink is removed as the link", () => {
    const t = target("posix-top-target");
    const top = path.join(base, "posix-top-link");
    fs.symlinkSync(t, top);
    removeTree(top);
    expect(fs.lstatSync(top, { throwIfNoEntry: false })).toBeUndefined();
    expectIntact(t);
  });
});

describe.skipIf(!underWine)("removeTree under Wine (Windows lane)", () => {
  test("a Unix symlink Wine follows is left in place with ELOOP; its target keeps every file", () => {
    const t = target("wine-target");
    const b = box("wine-box");
    const link = path.join(b, "sub", "dir-link");
    unixRun("/bin/ln", ["-s", unixPath(t), unixPath(link)], () => fs.existsSync(link));
    expect(fs.readdirSync(path.join(b, "sub")).sort()).toEqual(["dir-link", "ro.txt"]);
    let code: unknown;
    try {
      removeTree(b);
    } catch (err) {
      code = (err as { code?: unknown }).code;
    }
    expectIntact(t);
    expect(code).toBe("ELOOP");
    // everything but the link (and the directories holding it) is gone
    expect(fs.readdirSync(b)).toEqual(["sub"]);
    expect(fs.readdirSync(path.join(b, "sub"))).toEqual(["dir-link"]);
  });

  test("a top that is itself a Unix symlink is refused with ELOOP and its target keeps every file", () => {
    const t = target("wine-top-target");
    const top = path.join(base, "wine-top-link");
    unixRun("/bin/ln", ["-s", unixPath(t), unixPath(top)], () => fs.existsSync(top));
    let code: unknown;
    try {
      removeTree(top);
    } catch (err) {
      code = (err as { code?: unknown }).code;
    }
    expectIntact(t);
    expect(code).toBe("ELOOP");
  });

  test("a tree without links is removed whole, read-only files included", () => {
    const b = box("wine-plain");
    removeTree(b);
    expect(fs.existsSync(b)).toBe(false);
    removeTree(b); // absent is fine
  });
});

describe.skipIf(!realWindows)("removeTree on real Windows (NTFS links)", () => {
  test("junctions (drive and Volume{GUID} targets), directory and file symlinks are removed as links", () => {
    const t = target("nt-target");
    const b = box("nt-box");
    mklink(["/J", path.join(b, "jn-drive"), t]);
    mklink(["/J", path.join(b, "sub", "jn-volume"), volumeGuidPath(t)]);
    mklink(["/D", path.join(b, "dir-symlink"), t]);
    mklink([path.join(b, "sub", "file-symlink"), path.join(t, "keep.txt")]);
    // the junction to a volume path is what a path walk enters: libuv lstat calls it a directory
    expect(fs.readdirSync(path.join(b, "sub", "jn-volume")).sort()).toEqual(["inner", "keep.txt"]);
    removeTree(b);
    expect(fs.existsSync(b)).toBe(false);
    expectIntact(t);
  });

  test("a top that is itself a junction is removed as the junction", () => {
    const t = target("nt-top-target");
    const top = path.join(base, "nt-top-junction");
    mklink(["/J", top, t]);
    removeTree(top);
    expect(fs.existsSync(top)).toBe(false);
    expectIntact(t);
  });
});
