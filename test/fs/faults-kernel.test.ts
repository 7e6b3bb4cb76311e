// Real kernel faults, through a real `serverfs serve` over MCP stdio:
// - a full tmpfs (ENOSPC) and a read-only one (EROFS), mounted by serve's own launcher inside a
//   private mount namespace (`unshare -m`), so they vanish with it whatever happens; the test
//   looks at them through /proc/<serve>/root, frees the space (truncates a filler outside the
//   workdir) and remounts read-write (nsenter) to clear the fault;
// - EACCES from a directory without write permission for a serve running as an unprivileged uid
//   (root bypasses permission bits), and EPERM from an immutable directory (chattr +i binds root too).
// Every mutation answers its exact code, leaves the directory's entries, bytes and metadata as
// they were (no temp file), and once the fault is cleared the same request succeeds.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorCode, ok } from "../mcp/helpers.ts";
import { bareEnv, connectServe, type ServeClient } from "../support/mcp.ts";
import { BUN, CLI } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";
import { dirSnapshot } from "./disk-snapshot.ts";
import { unshareMounts } from "./helpers.ts";

// real processes and mounts on a shared 2-core machine: a ceiling, not a timing assertion
setDefaultTimeout(60_000);

const NOBODY = 65534;

function run(argv: string[]): { ok: boolean; err: string } {
  const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return { ok: r.exitCode === 0, err: r.stderr.toString().trim() };
}

function whyNot(): string | null {
  if (process.platform !== "linux") return "needs Linux mount namespaces";
  if (process.getuid?.() !== 0) return "needs root (mounts, another uid, chattr)";
  const probe = tempDir("sfs-nsprobe-");
  const ns = run([...unshareMounts(), "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]);
  if (!ns.ok) return `cannot mount a tmpfs in a private mount namespace: ${ns.err}`;
  return null;
}
const skip = whyNot();
if (skip !== null) console.warn(`faults-kernel: skipped: ${skip}`);

/** Whether the temp dir's filesystem takes the immutable flag (ext4, xfs, btrfs, tmpfs since 6.0). */
function immutableSupported(): boolean {
  if (skip !== null) return false;
  const f = path.join(tempDir("sfs-chattr-"), "probe");
  fs.writeFileSync(f, "");
  const set = run(["chattr", "+i", f]).ok;
  if (set) run(["chattr", "-i", f]);
  return set;
}
const immutable = immutableSupported();
if (skip === null && !immutable) console.warn("faults-kernel: the immutable-file case is skipped: the temp dir's filesystem refuses chattr +i");

function code(r: CallToolResult): string {
  return errorCode(r);
}

interface Case {
  tool: string;
  args: Record<string, unknown>;
}

/** Each case answers `expected` with the directory `dir` unchanged; after `clear()` each succeeds. */
async function refusedThenServed(serve: ServeClient, workdir: string, dir: string, cases: Case[], expected: string, clear: () => void): Promise<void> {
  const before = dirSnapshot(dir);
  for (const c of cases) {
    const r = await serve.call(c.tool, { workdir, ...c.args });
    expect({ tool: c.tool, code: code(r) }).toEqual({ tool: c.tool, code: expected });
    const message = (r.structuredContent as { message: string }).message;
    expect(message).toStartWith(`${workdir}:`);
    expect(message).not.toContain(dir);
    expect(dirSnapshot(dir)).toEqual(before);
  }
  clear();
  for (const c of cases) ok(await serve.call(c.tool, { workdir, ...c.args }));
}

async function revision(serve: ServeClient, workdir: string, p: string): Promise<string> {
  return ok<{ revision: string }>(await serve.call("stat_file", { workdir, path: p })).revision;
}

describe.skipIf(skip !== null)("a full and a read-only tmpfs in serve's own mount namespace", () => {
  let base = "";
  let serve: ServeClient | null = null;
  let full = "";
  let ro = "";
  let pid = 0;

  beforeAll(async () => {
    base = tempDir("sfs-kfaults-");
    full = path.join(base, "full");
    ro = path.join(base, "ro");
    const seed = path.join(base, "seed");
    fs.mkdirSync(full);
    fs.mkdirSync(ro);
    fs.mkdirSync(path.join(seed, "empty"), { recursive: true });
    fs.writeFileSync(path.join(seed, "keep.txt"), "original\n");
    fs.writeFileSync(path.join(seed, "bin.dat"), "binary bytes");
    fs.writeFileSync(path.join(seed, "doomed.txt"), "delete me\n");
    fs.writeFileSync(path.join(seed, "movable.txt"), "move me\n");
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      toml,
      [["full", full], ["ro", ro]].map(([a, p]) => `[[workdirs]]\nalias = "${a}"\npath = ${JSON.stringify(`${p}/w`)}\nread_only = false\nbinary_transfer_enabled = true\n`).join("\n"),
    );
    // Inside the namespace, before serve starts: both tmpfs seeded, the first filled to the last
    // page by a file beside the workdir, the second remounted read-only.
    const setup = [
      "set -e",
      'mount -t tmpfs -o size=256k tmpfs "$1"; mkdir "$1/w"; cp -a "$3/." "$1/w/"',
      'dd if=/dev/zero of="$1/fill" bs=4096 2>/dev/null || true',
      'mount -t tmpfs -o size=256k tmpfs "$2"; mkdir "$2/w"; cp -a "$3/." "$2/w/"; mount -o remount,ro "$2"',
      "shift 3",
      'exec "$@"',
    ].join("\n");
    const [command, ...prefix] = unshareMounts();
    serve = await connectServe({
      spawn: { command: command!, args: [...prefix, "sh", "-c", setup, "sh", full, ro, seed, BUN, CLI, "serve", "--config", toml] },
      cwd: base,
      env: bareEnv(base),
    });
    pid = serve.transport.pid!;
  }, 60_000);

  afterAll(async () => {
    await serve?.close();
  }, 60_000);

  test("ENOSPC: create, edit and upload answer NO_SPACE_LEFT; freeing space lets the same requests through", async () => {
    const s = serve!;
    const disk = `/proc/${pid}/root${full}/w`;
    expect(fs.readFileSync(path.join(disk, "keep.txt"), "utf8")).toBe("original\n");
    const cases: Case[] = [
      { tool: "create_text_file", args: { path: "new.txt", content: "fresh\n" } },
      { tool: "edit_text_file", args: { path: "keep.txt", expected_revision: await revision(s, "full", "keep.txt"), edits: [{ old_text: "original", new_text: "changed" }] } },
      { tool: "upload_binary_file", args: { path: "bin.dat", data_base64: Buffer.from("new bytes").toString("base64"), overwrite: true, expected_revision: await revision(s, "full", "bin.dat") } },
      { tool: "upload_binary_file", args: { path: "up.bin", data_base64: "AAEC" } },
    ];
    await refusedThenServed(s, "full", disk, cases, "NO_SPACE_LEFT", () => fs.truncateSync(`/proc/${pid}/root${full}/fill`, 0));
    expect(fs.readFileSync(path.join(disk, "keep.txt"), "utf8")).toBe("changed\n");
    expect(fs.readFileSync(path.join(disk, "bin.dat"), "utf8")).toBe("new bytes");
  });

  test("EROFS: every mutation answers READ_ONLY_FILESYSTEM; a read-write remount lets the same requests through", async () => {
    const s = serve!;
    const disk = `/proc/${pid}/root${ro}/w`;
    const cases: Case[] = [
      { tool: "create_text_file", args: { path: "new.txt", content: "fresh\n" } },
      { tool: "edit_text_file", args: { path: "keep.txt", expected_revision: await revision(s, "ro", "keep.txt"), edits: [{ old_text: "original", new_text: "changed" }] } },
      { tool: "upload_binary_file", args: { path: "bin.dat", data_base64: "AAEC", overwrite: true, expected_revision: await revision(s, "ro", "bin.dat") } },
      { tool: "delete_file", args: { path: "doomed.txt", expected_revision: await revision(s, "ro", "doomed.txt") } },
      { tool: "move_file", args: { source: "movable.txt", destination: "moved.txt", expected_revision: await revision(s, "ro", "movable.txt") } },
      { tool: "create_directory", args: { path: "made" } },
      { tool: "delete_directory", args: { path: "empty", expected_revision: await revision(s, "ro", "empty") } },
    ];
    // reads still work on the read-only mount
    expect(ok<{ content: string }>(await s.call("read_text_file", { workdir: "ro", path: "keep.txt" })).content).toBe("original\n");
    await refusedThenServed(s, "ro", disk, cases, "READ_ONLY_FILESYSTEM", () => {
      const r = run(["nsenter", "-t", String(pid), "-m", "mount", "-o", "remount,rw", ro]);
      if (!r.ok) throw new Error(`remount failed: ${r.err}`);
    });
    expect(fs.readdirSync(disk).sort()).toEqual(["bin.dat", "keep.txt", "made", "moved.txt", "new.txt"]);
  });
});

describe.skipIf(skip !== null)("EACCES for an unprivileged serve, EPERM from an immutable directory", () => {
  let base = "";
  let dir = "";
  let serve: ServeClient | null = null;

  beforeAll(async () => {
    base = tempDir("sfs-perm-");
    fs.chmodSync(base, 0o755);
    dir = path.join(base, "w");
    const locked = path.join(dir, "locked");
    fs.mkdirSync(path.join(locked, "gone"), { recursive: true });
    fs.writeFileSync(path.join(locked, "f.txt"), "original\n");
    fs.writeFileSync(path.join(locked, "f.bin"), "bytes");
    const frozen = path.join(dir, "frozen");
    fs.mkdirSync(frozen);
    fs.writeFileSync(path.join(frozen, "f.txt"), "frozen\n");
    fs.writeFileSync(path.join(frozen, "doomed.txt"), "delete me\n");
    for (const p of [dir, locked, path.join(locked, "gone"), path.join(locked, "f.txt"), path.join(locked, "f.bin"), frozen, path.join(frozen, "f.txt"), path.join(frozen, "doomed.txt")]) {
      fs.chownSync(p, NOBODY, NOBODY);
    }
    fs.chmodSync(locked, 0o555);
    if (immutable && !run(["chattr", "+i", frozen]).ok) throw new Error("chattr +i failed");
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(dir)}\nread_only = false\nbinary_transfer_enabled = true\n`);
    serve = await connectServe({
      spawn: { command: "setpriv", args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", BUN, CLI, "serve", "--config", toml] },
      cwd: base,
      env: bareEnv(base),
    });
  }, 60_000);

  afterAll(async () => {
    await serve?.close();
    if (immutable) run(["chattr", "-i", path.join(dir, "frozen")]);
  }, 60_000);

  test("a directory without write permission: every mutation in it answers ACCESS_DENIED; chmod lets the same requests through", async () => {
    const s = serve!;
    const cases: Case[] = [
      { tool: "create_text_file", args: { path: "locked/new.txt", content: "fresh\n" } },
      { tool: "edit_text_file", args: { path: "locked/f.txt", expected_revision: await revision(s, "w", "locked/f.txt"), edits: [{ old_text: "original", new_text: "changed" }] } },
      { tool: "upload_binary_file", args: { path: "locked/f.bin", data_base64: "AAEC", overwrite: true, expected_revision: await revision(s, "w", "locked/f.bin") } },
      { tool: "move_file", args: { source: "locked/f.bin", destination: "f.bin", expected_revision: null } },
      { tool: "create_directory", args: { path: "locked/made" } },
      { tool: "delete_directory", args: { path: "locked/gone", expected_revision: await revision(s, "w", "locked/gone") } },
    ];
    // the move's revision is the one the upload above will leave: fill it in once known
    const move = cases[3]!;
    const locked = path.join(dir, "locked");
    const before = dirSnapshot(locked);
    for (const c of cases) {
      if (c === move) c.args.expected_revision = await revision(s, "w", "locked/f.bin");
      const r = await s.call(c.tool, { workdir: "w", ...c.args });
      expect({ tool: c.tool, code: code(r) }).toEqual({ tool: c.tool, code: "ACCESS_DENIED" });
      expect(dirSnapshot(locked)).toEqual(before);
    }
    fs.chmodSync(locked, 0o755);
    for (const c of cases) {
      if (c === move) c.args.expected_revision = await revision(s, "w", "locked/f.bin");
      ok(await s.call(c.tool, { workdir: "w", ...c.args }));
    }
    expect(fs.readdirSync(locked).sort()).toEqual(["f.txt", "made", "new.txt"]);
    expect(fs.readFileSync(path.join(locked, "f.txt"), "utf8")).toBe("changed\n");
  });

  test.skipIf(!immutable)("an immutable directory: create, edit and delete in it answer ACCESS_DENIED (EPERM); chattr -i lets the same requests through", async () => {
    const s = serve!;
    const frozen = path.join(dir, "frozen");
    const cases: Case[] = [
      { tool: "create_text_file", args: { path: "frozen/new.txt", content: "fresh\n" } },
      { tool: "edit_text_file", args: { path: "frozen/f.txt", expected_revision: await revision(s, "w", "frozen/f.txt"), edits: [{ old_text: "frozen", new_text: "thawed" }] } },
      { tool: "delete_file", args: { path: "frozen/doomed.txt", expected_revision: await revision(s, "w", "frozen/doomed.txt") } },
    ];
    await refusedThenServed(s, "w", frozen, cases, "ACCESS_DENIED", () => {
      if (!run(["chattr", "-i", frozen]).ok) throw new Error("chattr -i failed");
    });
    expect(fs.readdirSync(frozen).sort()).toEqual(["f.txt", "new.txt"]);
    expect(fs.readFileSync(path.join(frozen, "f.txt"), "utf8")).toBe("thawed\n");
  });
});
