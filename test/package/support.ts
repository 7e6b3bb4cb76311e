// Shared by the package tests: where build/package.ts wrote its output (the package lane, .ci/package-lane.sh), and a fake release server for the install-script tests.
import fs from "node:fs";
import path from "node:path";

/** The directory build/package.ts wrote into (SERVERFS_TEST_PACKAGE_DIR, set by the lane). */
export function packageDir(): string {
  const dir = process.env.SERVERFS_TEST_PACKAGE_DIR;
  if (!dir || !fs.existsSync(path.join(dir, "SHA256SUMS"))) {
    throw new Error("SERVERFS_TEST_PACKAGE_DIR must name a directory build/package.ts wrote into: run bash .ci/package-lane.sh");
  }
  return path.resolve(dir);
}

export const VERSION = (JSON.parse(fs.readFileSync(path.resolve(import.meta.dir, "../../package.json"), "utf8")) as { version: string }).version;

/** The pids of `pid`'s children, read from /proc (never through the code under test). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
    if (text !== "") out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

/** Reads a stream until `needle` has appeared; resolves with everything read so far. */
export async function readUntil(stream: ReadableStream<Uint8Array>, needle: string, seen: { text: string }): Promise<void> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  while (!seen.text.includes(needle)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${JSON.stringify(needle)}; got ${JSON.stringify(seen.text)}`);
    seen.text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
}

/** Everything left on a stream that readUntil already read from, up to its end. */
export async function readRest(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * A fake release: the files under `root`, served on 127.0.0.1 only (a port the kernel picks), each
 * request's path recorded in `requested`. Anything outside `root`, or not a regular file, is a 404.
 */
export function serveReleaseDirectory(root: string, requested: string[]): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const rel = decodeURIComponent(new URL(req.url).pathname).replace(/^\/+/, "");
      requested.push(rel);
      const file = path.join(root, rel);
      if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) return new Response("not found", { status: 404 });
      return new Response(fs.readFileSync(file));
    },
  });
}
