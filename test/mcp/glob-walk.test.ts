// Globs and walks through the real `serverfs serve` process over stdio (raw JSON-RPC frames):
// the backtracking-pathological patterns get their correct answer, over-long patterns are
// INVALID_ARGUMENT, find_files and search_text stop at search_timeout_seconds with SEARCH_TIMEOUT,
// a second request is answered while a long walk is still running, and nothing on disk changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { rawServe, type RawReply } from "../support/raw-serve.ts";
import { removeDir, tempDir } from "./helpers.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const CLI = path.join(ROOT, "src/cli.ts");
const LONG_A = "a".repeat(240);
/** Exactly the bound (1024 characters), never matches a name ending in a digit, and ends in a class so no literal pre-filter skips the work. */
const HEAVY = `${"*?".repeat(510)}*[b]`;
const HEAVY_FILES = 6000;
let base: string;
let small: string;
let big: string;

beforeAll(() => {
  base = tempDir("serverfs-glob-");
  small = path.join(base, "small");
  big = path.join(base, "big");
  fs.mkdirSync(path.join(small, "d", "e"), { recursive: true });
  // Names on which a backtracking `*a*a*...b` or `*?*?*...b` regex runs for minutes.
  fs.writeFileSync(path.join(small, `${LONG_A}c`), "needle\n");
  fs.writeFileSync(path.join(small, "d", `${LONG_A}b`), "needle\n");
  fs.writeFileSync(path.join(small, "d", "e", `${LONG_A}`), "needle\n");
  fs.writeFileSync(path.join(small, "plain.txt"), "needle\n");
  // Enough long names that HEAVY (linear, but 1024 states) takes seconds over the tree.
  fs.mkdirSync(big);
  for (let i = 0; i < HEAVY_FILES; i++) fs.writeFileSync(path.join(big, `${LONG_A}${String(i).padStart(5, "0")}`), "");
  fs.writeFileSync(path.join(base, "serverfs.toml"), `[limits]\nsearch_timeout_seconds = 1\nmax_search_results = 1000\n\n[[workdirs]]\nalias = "small"\npath = ${JSON.stringify(small)}\n\n[[workdirs]]\nalias = "big"\npath = ${JSON.stringify(big)}\n`);
}, 60_000); // thousands of files on a loaded machine
const spawned: { kill(signal?: number): void; exitCode: number | null }[] = [];
afterAll(() => {
  // A server still running here means a test failed mid-walk; one stuck in synchronous work
  // cannot run its SIGTERM handler, so SIGKILL.
  for (const p of spawned) if (p.exitCode === null) p.kill(9);
  removeDir(base);
});

/** Every file and directory below `dir` with its size and mtime: what "unchanged" means here. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${st.isDirectory() ? "dir" : st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

type Reply = RawReply;

const serve = (args: string[]) => rawServe(args, base, spawned);

const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const byId = (replies: Reply[], id: number) => replies.find((r) => r.id === id) as Reply;
const sc = (r: Reply) => r.result?.structuredContent as Record<string, unknown>;

describe("globs and walks through serve over stdio", () => {
  let server: ReturnType<typeof serve>;
  let before: string[];
  beforeAll(async () => {
    before = [...snapshot(small), ...snapshot(big)];
    server = serve(["--config", path.join(base, "serverfs.toml")]);
    await server.ready;
  });
  afterAll(async () => {
    expect(await server.close()).toBe(0);
    expect([...snapshot(small), ...snapshot(big)]).toEqual(before);
  });

  test("backtracking-pathological find_files patterns return their correct matches", async () => {
    const cases: [string, string[]][] = [
      ["*a*a*a*a*a*a*a*b", [`d/${LONG_A}b`]],
      ["*?*?*?*?*?*?*?*b", [`d/${LONG_A}b`]],
      ["*a*a*a*a*a*a*a*", [`${LONG_A}c`, `d/${LONG_A}b`, `d/e/${LONG_A}`]],
      ["[a]*[a]*[a]*[a]*[a]*?*?*?c", [`${LONG_A}c`]],
      ["*a*a*a*a*a*a*a*x", []],
    ];
    server.send(...cases.map(([pattern], i) => call(10 + i, "find_files", { workdir: "small", pattern })));
    await server.until(cases.map((_, i) => 10 + i));
    cases.forEach(([pattern, want], i) => {
      const r = byId(server.replies, 10 + i);
      expect({ pattern, paths: (sc(r).matches as { path: string }[]).map((m) => m.path).sort() }).toEqual({ pattern, paths: want });
    });
  });

  test("backtracking-pathological search_text globs filter correctly", async () => {
    const cases: [string, string[]][] = [
      ["*a*a*a*a*a*a*a*b", [`d/${LONG_A}b`]],
      ["**/*?*?*?*?*?*?*?*b", [`d/${LONG_A}b`]],
      ["**/**/**/**/**/*a*a*a*a*a*a*a", [`d/e/${LONG_A}`]],
      ["d/**/*a*a*a*a*a*a*a*", [`d/${LONG_A}b`, `d/e/${LONG_A}`]],
      ["*a*a*a*a*a*a*a*x", []],
    ];
    server.send(...cases.map(([glob], i) => call(20 + i, "search_text", { workdir: "small", query: "needle", glob })));
    await server.until(cases.map((_, i) => 20 + i));
    cases.forEach(([glob, want], i) => {
      const r = byId(server.replies, 20 + i);
      expect({ glob, paths: (sc(r).matches as { path: string }[]).map((m) => m.path).sort() }).toEqual({ glob, paths: want });
    });
  });

  test("an over-long pattern or glob is INVALID_ARGUMENT naming the parameter; the bound itself is accepted", async () => {
    const over = "*".repeat(1025);
    server.send(
      call(30, "find_files", { workdir: "small", pattern: over }),
      call(31, "search_text", { workdir: "small", query: "needle", glob: over }),
      call(32, "find_files", { workdir: "small", pattern: `${"?".repeat(1023)}*` }),
      call(33, "search_text", { workdir: "small", query: "needle", glob: `${"?".repeat(1023)}*` }),
    );
    await server.until([30, 31, 32, 33]);
    for (const [id, param] of [[30, "pattern"], [31, "glob"]] as const) {
      const r = byId(server.replies, id);
      expect(r.result?.isError).toBe(true);
      expect(sc(r).code).toBe("INVALID_ARGUMENT");
      expect(sc(r).message).toContain(`'${param}'`);
      expect(sc(r).message).not.toContain("*****");
    }
    expect(sc(byId(server.replies, 32))).toEqual({ matches: [], returned: 0, truncated: false, ignored: 0 });
    expect(sc(byId(server.replies, 33))).toEqual({ matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 });
  });

  test("find_files past search_timeout_seconds is SEARCH_TIMEOUT, and a second request is answered first", async () => {
    server.send(call(40, "find_files", { workdir: "big", pattern: HEAVY }), call(41, "stat_file", { workdir: "small", path: "plain.txt" }), call(42, "list_directory", { workdir: "small" }));
    await server.until([40, 41, 42]);
    const order = server.replies.map((r) => r.id).filter((id) => id >= 40 && id <= 42);
    expect(order).toEqual([41, 42, 40]);
    expect(sc(byId(server.replies, 41))).toMatchObject({ path: "plain.txt", type: "file", size: 7 });
    expect(sc(byId(server.replies, 40))).toMatchObject({ code: "SEARCH_TIMEOUT" });
  });

  test("search_text whose glob matches nothing still stops at its deadline, and does not hold up others", async () => {
    server.send(call(50, "search_text", { workdir: "big", query: "needle", glob: HEAVY }), call(51, "find_files", { workdir: "small", pattern: "plain.*" }));
    await server.until([50, 51]);
    const order = server.replies.map((r) => r.id).filter((id) => id === 50 || id === 51);
    expect(order).toEqual([51, 50]);
    expect(sc(byId(server.replies, 51))).toEqual({ matches: [{ path: "plain.txt" }], returned: 1, truncated: false, ignored: 0 });
    expect(sc(byId(server.replies, 50))).toMatchObject({ code: "SEARCH_TIMEOUT" });
  });
});

describe("deny globs in configuration", () => {
  test("a deny glob over 512 characters is refused at load, naming the key; exit 2, nothing served", async () => {
    const toml = path.join(base, "long-glob.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "small"\npath = ${JSON.stringify(small)}\nextra_deny_globs = ["*.pem", ${JSON.stringify("*?".repeat(257))}]\n`);
    const proc = Bun.spawn([process.execPath, CLI, "serve", "--config", toml], { cwd: base, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toContain("CONFIGURATION_ERROR");
    expect(err).toContain("workdirs[0].extra_deny_globs[1]: a deny glob must be at most 512 characters");
    expect(err).not.toContain("*?*?");
  });

  test("a pathological deny glob within the bound is matched in linear time on every walk", async () => {
    const toml = path.join(base, "deny.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "small"\npath = ${JSON.stringify(small)}\nextra_deny_globs = ["*a*a*a*a*a*a*a*b", "**/e/*?*?*?*?*?*?*?*a"]\n`);
    const s = serve(["--config", toml]);
    await s.ready;
    s.send(call(2, "find_files", { workdir: "small", pattern: "*" }), call(3, "stat_file", { workdir: "small", path: `d/${LONG_A}b` }), call(4, "search_text", { workdir: "small", query: "needle" }));
    await s.until([2, 3, 4]);
    expect((sc(byId(s.replies, 2)).matches as { path: string }[]).map((m) => m.path).sort()).toEqual([`${LONG_A}c`, "plain.txt"]);
    expect(sc(byId(s.replies, 3))).toMatchObject({ code: "DENIED_PATH" });
    expect((sc(byId(s.replies, 4)).matches as { path: string }[]).map((m) => m.path).sort()).toEqual([`${LONG_A}c`, "plain.txt"]);
    expect(await s.close()).toBe(0);
  });
});
