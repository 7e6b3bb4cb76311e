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

function buildCase(seed: number, base: string): Case {
  const r = mulberry32(seed);
  const root = path.join(base, `case-${seed.toString(16)}`);
  fs.mkdirSync(root);
  const dirs = [""];
  const grow = (rel: string, depth: number): void => {
    const files = 1 + Math.floor(r() * 4);
    for (let i = 0; i < files; i++) {
      const f = path.join(root, rel, pick(r, NAMES));
      if (!fs.existsSync(f)) fs.writeFileSync(f, "x");
    }
    if (depth >= 3) return;
    const subs = Math.floor(r() * (depth === 0 ? 4 : 3));
    for (let i = 0; i < subs; i++) {
      const d = pick(r, DIRS);
      const child = rel === "" ? d : `${rel}/${d}`;
      if (fs.existsSync(path.join(root, child)) && !fs.statSync(path.join(root, child)).isDirectory()) continue;
      fs.mkdirSync(path.join(root, child), { recursive: true });
      if (!dirs.includes(child)) dirs.push(child);
      grow(child, depth + 1);
    }
  };
  grow("", 0);
  for (const d of dirs) {
    if (r() < (d === "" ? 0.9 : 0.45)) fs.writeFileSync(path.join(root, d, ".gitignore"), ignoreText(r, 1 + Math.floor(r() * 6)));
  }
  git(root, ["init", "-q"]);
  if (r() < 0.35) fs.writeFileSync(path.join(root, ".git/info/exclude"), ignoreText(r, 1 + Math.floor(r() * 4)));
  return { root, seed };
}

const emptyHome = tempDir("sfs-githome-");

function git(cwd: string, args: string[]): Buffer {
  const p = Bun.spawnSync([GIT as string, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: emptyHome, XDG_CONFIG_HOME: emptyHome, GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C" },
  });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${p.stderr.toString()}`);
  return p.stdout;
}

/** What git lists, narrowed to what serverfs can show: regular files, no hidden component. */
function gitVisibleFiles(root: string): string[] {
  const out = git(root, ["ls-files", "--others", "--exclude-standard", "-z"]).toString("utf8");
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
