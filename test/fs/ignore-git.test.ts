// Ignore files against git itself: random trees with random nested .gitignore files (negations,
// anchors, directory-only patterns, `**`, escapes, character classes, trailing spaces, comments,
// CRLF) and, in some cases, .git/info/exclude. The regular files with visible names find_files
// returns (pattern `*`) must be exactly what `git ls-files --others --exclude-standard` lists in
// the same directory, run with an empty HOME and no system config (no global excludes). Each case
// is built from a fixed seed, printed in the test name, so a failure replays exactly.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createFileService } from "../../src/fs/index.ts";
import { registry, workdir } from "../support/registry.ts";
import { repetitions } from "../support/stress.ts";
import { tempDir } from "../support/temp.ts";
import { mulberry32 } from "../support/prng.ts";

const GIT = Bun.which("git");
const CASES = repetitions(36, 400);
const BASE_SEED = 0x5eed1e;


// Names that exercise the pattern syntax as literals: spaces, `#`, `!`, `[`, `*`, `?`, `\`, non-ASCII.
const NAMES = ["a", "b", "ab", "abc", "foo", "bar", "x1", "build", "lib", "src", "a b", "t ", "#h", "!n", "[c]", "s*t", "q?", "é", "éa", "b\\c", "Foo", "node_modules", "log.txt", "m.log", "z.tmp", ".hid"];
const DIRS = ["a", "b", "src", "lib", "build", "foo", "node_modules", "x1", "d d", "é", "[c]", ".hd"];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

/** One path segment of a pattern: a literal name (escaped where it must be), or a wildcard shape. */
function segment(r: () => number): string {
  const shapes = [
    () => pick(r, NAMES).replace(/[\\*?[]/g, (c) => `\\${c}`).replace(/^[#!]/, (c) => `\\${c}`),
    () => "*",
    () => "?",
    () => "**",
    () => `${pick(r, ["a", "b", "f", "x", "m", "n"])}*`,
    () => `*${pick(r, [".log", ".txt", "o", "b", "1", ".tmp"])}`,
    () => pick(r, ["[a-c]*", "[!a]*", "[^b]?", "[[:alpha:]]*", "[[:digit:]]", "*[0-9]", "[ab]b*", "[]a]*", "[a-]*", "?[!x]*"]),
    () => pick(r, ["a?", "?b", "é", "??", "?", "\\é", "x[1]", "s\\*t", "q\\?", "\\[c]", "a\\ b", "t\\ "]),
    () => pick(r, DIRS),
  ];
  return pick(r, shapes)();
}

function pattern(r: () => number): string {
  const n = 1 + Math.floor(r() * (r() < 0.5 ? 1 : 3));
  const segs: string[] = [];
  for (let i = 0; i < n; i++) segs.push(segment(r));
  let p = segs.join("/");
  if (r() < 0.2) p = `/${p}`;
  if (r() < 0.12) p = `**/${p}`;
  if (r() < 0.25) p = `${p}/`;
  if (r() < 0.3) p = `!${p}`;
  if (r() < 0.1) p += "  "; // trimmed
  return p;
}

function ignoreText(r: () => number, count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const roll = r();
    if (roll < 0.06) lines.push("# a comment");
    else if (roll < 0.1) lines.push("");
    else lines.push(pattern(r));
  }
  const eol = r() < 0.15 ? "\r\n" : "\n";
  return lines.join(eol) + (r() < 0.8 ? eol : "");
}

interface Case {
  root: string;
  seed: number;
}

/**
 * `spell`: how a name or a pattern is written (the case-folding run gives some letters another
 * case); names that differ only in case never meet in one directory there.
 */
function buildCase(seed: number, base: string, spell?: (text: string, r: () => number) => string): Case {
  const r = mulberry32(seed);
  const write = spell ?? ((t: string) => t);
  // Patterns are respelled less often than names, so most of them meet names in another case.
  const writePatterns = (t: string, rr: () => number) => (spell && rr() < 0.3 ? spell(t, rr) : t);
  // Names one directory may not hold together: equal ones, and with `spell` those equal but for case.
  const same = (a: string, b: string) => (spell ? a.toLowerCase() === b.toLowerCase() : a === b);
  const root = path.join(base, `case-${seed.toString(16)}`);
  fs.mkdirSync(root);
  const dirs = [""];
  const grow = (rel: string, depth: number): void => {
    const files = 1 + Math.floor(r() * 4);
    for (let i = 0; i < files; i++) {
      const name = write(pick(r, NAMES), r);
      const taken = fs.readdirSync(path.join(root, rel)).some((n) => same(n, name));
      if (!taken) fs.writeFileSync(path.join(root, rel, name), "x");
    }
    if (depth >= 3) return;
    const subs = Math.floor(r() * (depth === 0 ? 4 : 3));
    for (let i = 0; i < subs; i++) {
      const d = write(pick(r, DIRS), r);
      const child = rel === "" ? d : `${rel}/${d}`;
      const clash = fs.readdirSync(path.join(root, rel)).find((n) => same(n, d));
      if (clash !== undefined && (clash !== d || !fs.statSync(path.join(root, child)).isDirectory())) continue;
      fs.mkdirSync(path.join(root, child), { recursive: true });
      if (!dirs.includes(child)) dirs.push(child);
      grow(child, depth + 1);
    }
  };
  grow("", 0);
  for (const d of dirs) {
    if (r() < (d === "" ? 0.9 : 0.45)) fs.writeFileSync(path.join(root, d, ".gitignore"), writePatterns(ignoreText(r, 1 + Math.floor(r() * 6)), r));
  }
  git(root, ["init", "-q"]);
  if (r() < 0.35) fs.writeFileSync(path.join(root, ".git/info/exclude"), writePatterns(ignoreText(r, 1 + Math.floor(r() * 4)), r));
  return { root, seed };
}

const emptyHome = tempDir("sfs-githome-");

function git(cwd: string, args: string[], config: string[] = []): Buffer {
  const p = Bun.spawnSync([GIT as string, ...config, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: emptyHome, XDG_CONFIG_HOME: emptyHome, GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C" },
  });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${p.stderr.toString()}`);
  return p.stdout;
}

/** What git lists, narrowed to what serverfs can show: regular files, no hidden component. */
function gitVisibleFiles(root: string, config: string[] = []): string[] {
  const out = git(root, ["ls-files", "--others", "--exclude-standard", "-z"], config).toString("utf8");
  return out
    .split("\0")
    .filter((p) => p !== "")
    .filter((p) => !p.split("/").some((c) => c.startsWith(".")))
    .filter((p) => fs.lstatSync(path.join(root, p)).isFile())
    .sort();
}

async function serverfsFiles(root: string): Promise<string[]> {
  const svc = createFileService(registry([workdir("w", root)], { max_search_results: 100_000 }));
  try {
    const r = await svc.findFiles({ workdir: "w", pattern: "*", limit: 100_000 });
    expect(r.truncated).toBe(false);
    return r.matches.map((m) => m.path).sort();
  } finally {
    svc.close();
  }
}

function describeCase(root: string): string {
  const lines: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === "" ? e.name : `${rel}/${e.name}`;
      if (child === ".git") {
        const ex = path.join(root, ".git/info/exclude");
        lines.push(`.git/info/exclude: ${JSON.stringify(fs.readFileSync(ex, "utf8"))}`);
        continue;
      }
      if (e.isDirectory()) walk(child);
      else if (e.name === ".gitignore") lines.push(`${child}: ${JSON.stringify(fs.readFileSync(path.join(root, child), "utf8"))}`);
    }
  };
  walk("");
  return lines.join("\n");
}

describe.skipIf(GIT === null)("ignore files agree with git ls-files --others --exclude-standard", () => {
  const base = tempDir("sfs-ignore-git-");
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  test(`${CASES} random trees, seeds ${BASE_SEED.toString(16)}+0..${CASES - 1}`, async () => {
    let compared = 0;
    let ignoredSomething = 0;
    for (let i = 0; i < CASES; i++) {
      const seed = BASE_SEED + i;
      const c = buildCase(seed, base);
      const want = gitVisibleFiles(c.root);
      const got = await serverfsFiles(c.root);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(`seed ${seed.toString(16)} differs from git\n${describeCase(c.root)}\ngit:      ${JSON.stringify(want)}\nserverfs: ${JSON.stringify(got)}`);
      }
      const all = await createFileService(registry([workdir("w", c.root)], { max_search_results: 100_000 })).findFiles({
        workdir: "w",
        pattern: "*",
        limit: 100_000,
        include_ignored: true,
      });
      if (all.returned > got.length) ignoredSomething++;
      compared++;
      fs.rmSync(c.root, { recursive: true, force: true });
    }
    expect(compared).toBe(CASES);
    // the generator is not vacuous: most cases ignore something
    expect(ignoredSomething).toBeGreaterThan(CASES / 2);
  }, 600_000);
});

// The same comparison on a filesystem that folds case, against git with core.ignorecase=true (what
// `git init` sets on such a filesystem, and git's default on macOS and Windows): `Node_Modules/`
// in a .gitignore then ignores `node_modules`, and `[A-C]*` takes `b.txt`. The workdir is a real
// case-insensitive mount (the FUSE passthrough that folds case, test/fixtures/casefold/ci_fuse.py,
// also used by casefold-mount.test.ts); git reads the same trees through their case-sensitive
// backing directory, with the setting given on its command line. Names get random letters in the
// other case, and so do some ignore files.
const FUSE_FS = path.resolve(import.meta.dir, "../fixtures/casefold/ci_fuse.py");
const PYTHON = "/usr/bin/python3";
const FOLD_CASES = repetitions(40, 200);

function foldWhyNot(): string | null {
  if (GIT === null) return "git is not installed (.ci/run installs it)";
  if (process.platform !== "linux") return "needs a Linux FUSE mount";
  if (process.getuid?.() !== 0) return "needs root to mount";
  if (!fs.existsSync("/dev/fuse")) return "no /dev/fuse";
  if (Bun.spawnSync([PYTHON, "-c", "import fusepy"]).exitCode !== 0) return "python3-fusepy is not installed (.ci/run installs it)";
  return null;
}
const foldSkip = foldWhyNot();

/** Some ASCII letters of `text` in the other case (escapes and class names keep their meaning). */
function mixCase(text: string, r: () => number): string {
  let out = "";
  for (const ch of text) out += /[a-z]/.test(ch) && r() < 0.5 ? ch.toUpperCase() : /[A-Z]/.test(ch) && r() < 0.5 ? ch.toLowerCase() : ch;
  // `[:ALPHA:]` is no class name for git; keep the POSIX names lower-case
  return out.replace(/\[:([A-Za-z]+):\]/g, (_m, name: string) => `[:${name.toLowerCase()}:]`);
}

describe.skipIf(foldSkip !== null)(`ignore files on a case-folding filesystem agree with git -c core.ignorecase=true${foldSkip ? ` (skipped: ${foldSkip})` : ""}`, () => {
  const base = tempDir("sfs-ignore-fold-");
  const backing = path.join(base, "backing");
  const mount = path.join(base, "ci");
  let fuse: ReturnType<typeof Bun.spawn> | null = null;
  afterAll(async () => {
    if (Bun.spawnSync(["umount", mount]).exitCode !== 0) Bun.spawnSync(["umount", "-l", mount]);
    fuse?.kill();
    await fuse?.exited;
    fs.rmSync(base, { recursive: true, force: true });
  });

  test(`${FOLD_CASES} random trees with mixed-case names and patterns, seeds ${(BASE_SEED + 0x1000).toString(16)}+0..${FOLD_CASES - 1}`, async () => {
    fs.mkdirSync(backing);
    fs.mkdirSync(mount);
    fuse = Bun.spawn([PYTHON, FUSE_FS, backing, mount], { stdout: "ignore", stderr: "pipe" });
    // bounded by the test's timeout: how long a FUSE mount takes to appear is the machine's business
    while (fs.statSync(mount).dev === fs.statSync(base).dev) await Bun.sleep(20);
    let folded = 0;
    for (let i = 0; i < FOLD_CASES; i++) {
      const seed = BASE_SEED + 0x1000 + i;
      const c = buildCase(seed, backing, mixCase);
      const want = gitVisibleFiles(c.root, ["-c", "core.ignorecase=true"]);
      const plain = gitVisibleFiles(c.root, ["-c", "core.ignorecase=false"]);
      if (JSON.stringify(plain) !== JSON.stringify(want)) folded++;
      const got = await serverfsFiles(path.join(mount, path.basename(c.root)));
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(`seed ${seed.toString(16)} differs from git -c core.ignorecase=true\n${describeCase(c.root)}\ngit:      ${JSON.stringify(want)}\nserverfs: ${JSON.stringify(got)}`);
      }
      fs.rmSync(c.root, { recursive: true, force: true });
    }
    // not vacuous: in many cases the setting changes what git ignores, and serverfs followed it
    expect(folded).toBeGreaterThan(FOLD_CASES / 8);
  }, 600_000);
});
