// Helpers for the file-layer tests: a service over a fresh tree, assertions on coded errors and
// special files. Temp dirs and registries come from test/support/.
import { expect } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { FsLimits, Workdir } from "../../src/config/types.ts";
import { ServerfsError, type ErrorCode } from "../../src/errors.ts";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { fsNative, type FsNative } from "../../platform/fs/native.ts";
import { registry, workdir } from "../support/registry.ts";
import { tempDir as supportTempDir } from "../support/temp.ts";

export { removeDir as removeTemp } from "../support/temp.ts";

export function tempDir(prefix = "serverfs-fs-test-"): string {
  return supportTempDir(prefix);
}

export { registry, workdir } from "../support/registry.ts";

/**
 * The backend every `single()` service uses: this OS's, or (SFS_TEST_BACKEND=darwin-on-linux)
 * the macOS backend's logic over Linux syscalls, to run the file tests through it here.
 */
async function testBackend(): Promise<FsNative | undefined> {
  if (process.env.SFS_TEST_BACKEND !== "darwin-on-linux") return undefined;
  const [{ makeDarwinNative }, { linuxDarwinCalls }] = await Promise.all([import("../../platform/fs/resolve-darwin.ts"), import("../support/darwin-calls-linux.ts")]);
  return makeDarwinNative(linuxDarwinCalls);
}
const backend = await testBackend();

/** The backend `single()` uses by default, for tests that wrap it. */
export function testNative(): FsNative {
  return backend ?? fsNative();
}

/** A service over one read-write workdir `w` rooted at a fresh temp dir. */
export function single(over: Partial<Workdir> = {}, limits: Partial<FsLimits> = {}, native: FsNative | undefined = backend): { svc: FileService; root: string; base: string } {
  const base = tempDir();
  const root = path.join(base, "root");
  fs.mkdirSync(root);
  const svc = createFileService(registry([workdir("w", root, over)], limits), { native });
  return { svc, root, base };
}

/** Await `p` and expect a ServerfsError with `code`; returns it. */
export async function expectCode(p: Promise<unknown> | (() => unknown), code: ErrorCode): Promise<ServerfsError> {
  let caught: unknown;
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    caught = err;
  }
  if (!(caught instanceof ServerfsError)) throw new Error(`expected ServerfsError ${code}, got ${caught === undefined ? "success" : String(caught)}`);
  expect(caught.code).toBe(code);
  return caught;
}

export function write(root: string, rel: string, content: string | Uint8Array, mode?: number): void {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  if (mode !== undefined) fs.chmodSync(p, mode);
}

export function read(root: string, rel: string): Buffer {
  return fs.readFileSync(path.join(root, rel));
}

/** Names in a directory, including hidden and reserved ones. */
export function physical(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

/** A bound unix socket file at `p` (closed listener leaves the socket inode in place). */
export async function makeSocket(p: string): Promise<void> {
  const net = await import("node:net");
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(p, resolve));
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!fs.existsSync(p)) {
    // Some runtimes unlink on close; bind again without closing via a child process.
    const r = Bun.spawnSync(["python3", "-c", `import socket; s=socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(p)})`]);
    if (r.exitCode !== 0) throw new Error("could not create a unix socket fixture");
  }
}

export function mkfifo(p: string): void {
  const r = Bun.spawnSync(["mkfifo", p]);
  if (r.exitCode !== 0) throw new Error("mkfifo failed");
}


/**
 * The underlying tree of the real-mount tests (fixtures/mounts-child.ts mounts over root/mnt,
 * root/bind and root/fbind.txt inside its own namespace): what the parent sees, mount points plain.
 */
export function mountsTree(): string {
  const base = tempDir("serverfs-mounts-");
  write(base, "root/top.txt", "needle top\n");
  write(base, "root/sub/inner.txt", "needle inner\n");
  fs.mkdirSync(path.join(base, "root/mnt"));
  fs.mkdirSync(path.join(base, "root/bind"));
  write(base, "root/fbind.txt", "underlying\n");
  write(base, "other/b.txt", "needle b\n");
  write(base, "outside.txt", "needle outside\n");
  return base;
}

/** The command prefix for a private mount namespace: root directly, anyone else mapped to root in a user namespace. */
export function unshareMounts(): string[] {
  return process.getuid?.() === 0 ? ["unshare", "-m", "--propagation", "private"] : ["unshare", "-rm", "--propagation", "private"];
}
