// platform/ is a leaf (docs/platform.md, "Where platform code lives"): nothing under platform/
// imports from src/, and bun:ffi is imported only under platform/. The scanner reads the real
// files; the fixture cases prove it reports each kind of violation, so the real scan cannot pass
// by finding nothing.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const REPO = path.resolve(import.meta.dir, "../..");
const SOURCE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", ".git"]);
// Each file with the loader its extension means: `<T>(x) => ...` is a generic in .ts, JSX in .tsx.
const transpilers = { ts: new Bun.Transpiler({ loader: "ts" }), tsx: new Bun.Transpiler({ loader: "tsx" }) };

/**
 * Every module specifier a file imports or re-exports, type-only ones included. Bun's scanner
 * parses real syntax (strings and comments are not imports) but erases type-only imports, so the
 * `type` modifiers are dropped first; `import("x").T` type queries are matched separately.
 */
export function importsOf(source: string, loader: "ts" | "tsx" = "ts"): string[] {
  const valueOnly = source
    .replace(/^#![^\n]*/, "")
    .replace(/\bimport\s+type\s+(?=[{*]|[A-Za-z_$][\w$]*\s+from\b)/g, "import ")
    .replace(/\bexport\s+type\s+(?=[{*])/g, "export ")
    .replace(/([{,]\s*)type\s+(?=[A-Za-z_$][\w$]*\s*(?:,|}|\bas\b))/g, "$1");
  const found = transpilers[loader].scanImports(valueOnly).map((i) => i.path);
  for (const m of source.matchAll(/\bimport\(\s*(["'])([^"'\n]+)\1\s*\)\s*\./g)) found.push(m[2]!);
  return found;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.isFile() && SOURCE.test(entry.name)) out.push(full);
  }
  return out;
}

function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** Layering violations under `root`, as "relative/file -> specifier". */
export function layeringViolations(root: string): { platformImportsSrc: string[]; ffiOutsidePlatform: string[] } {
  const platformDir = path.join(root, "platform");
  const srcDir = path.join(root, "src");
  const platformImportsSrc: string[] = [];
  const ffiOutsidePlatform: string[] = [];
  for (const file of sourceFiles(root)) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    const inPlatform = within(file, platformDir);
    let specs: string[];
    try {
      specs = importsOf(fs.readFileSync(file, "utf8"), /\.[jt]sx$/.test(file) ? "tsx" : "ts");
    } catch (err) {
      throw new Error(`cannot scan ${rel}: ${String(err)}`);
    }
    for (const spec of specs) {
      if (inPlatform && spec.startsWith(".") && within(path.resolve(path.dirname(file), spec), srcDir)) {
        platformImportsSrc.push(`${rel} -> ${spec}`);
      }
      if (!inPlatform && spec === "bun:ffi" && !INDEPENDENT_OBSERVERS.has(rel)) ffiOutsidePlatform.push(`${rel} -> ${spec}`);
    }
  }
  return { platformImportsSrc, ffiOutsidePlatform };
}

/**
 * Test helpers that observe the OS independently of the product. On Windows there is no /proc:
 * checking that a stopped tree left no process needs the Toolhelp API, and using platform/'s own
 * bindings would let a bug there hide itself. The escape fixture is a provider acting as an
 * adversary: it calls the Job Object API a real provider could call on its own job. Only these
 * named files may bind FFI outside platform/.
 */
const INDEPENDENT_OBSERVERS: ReadonlySet<string> = new Set([
  "test/platform/windows-helpers.ts",
  "test/platform/fixtures/job-escape-provider.ts",
]);

const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) fs.rmSync(dir, { recursive: true, force: true });
});

function fixture(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-layering-"));
  fixtures.push(root);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe("the platform layer is a leaf", () => {
  test("no file under platform/ imports from src/, and bun:ffi is imported only under platform/", () => {
    expect(layeringViolations(REPO)).toEqual({ platformImportsSrc: [], ffiOutsidePlatform: [] });
  });

  test("the real scan sees the imports it judges (it is not vacuous)", () => {
    // src/ does import platform/, and platform/ does import bun:ffi; the scan must see both.
    expect(importsOf(fs.readFileSync(path.join(REPO, "src/errors.ts"), "utf8"))).toContain("../platform/errors.ts");
    expect(importsOf(fs.readFileSync(path.join(REPO, "platform/fs/linux.ts"), "utf8"))).toContain("bun:ffi");
    expect(importsOf(fs.readFileSync(path.join(REPO, "platform/fs/mounts-darwin.ts"), "utf8"))).toContain("bun:ffi");
  });

  test("a fixture tree with every kind of violation is reported file by file", () => {
    const root = fixture({
      "platform/value.ts": 'import { ServerfsError } from "../src/errors.ts";\nexport const e = ServerfsError;\n',
      "platform/deep/type-only.ts": 'import type { ErrorCode } from "../../src/errors.ts";\nexport type C = ErrorCode;\n',
      "platform/inline-type.ts": 'import { type ErrorCode } from "../src/errors.ts";\nexport type C = ErrorCode;\n',
      "platform/reexport.ts": 'export { isWithin } from "../src/common/paths.ts";\n',
      "platform/type-query.ts": 'export type P = import("../src/config/paths.ts").HostFacts;\n',
      "platform/dynamic.ts": 'export async function f() {\n  return import("../src/cli.ts");\n}\n',
      "platform/ok.ts": 'import { dlopen } from "bun:ffi";\nimport { x } from "./value.ts";\n// import { y } from "../src/comment.ts";\nexport const s = \'import { z } from "../src/string.ts"\';\nexport { dlopen, x };\n',
      "src/static-ffi.ts": 'import { dlopen } from "bun:ffi";\nexport { dlopen };\n',
      "src/deep/dynamic-ffi.ts": 'export async function g() {\n  return (await import("bun:ffi")).dlopen;\n}\n',
      "test/type-ffi.ts": 'import type { Pointer } from "bun:ffi";\nexport type P = Pointer;\n',
      "src/mentions.ts": '// bun:ffi is named in a comment only\nexport const note = "bun:ffi";\n',
      "node_modules/dep/index.ts": 'import { dlopen } from "bun:ffi";\n',
    });
    const found = layeringViolations(root);
    expect(found.platformImportsSrc.sort()).toEqual(
      [
        "platform/deep/type-only.ts -> ../../src/errors.ts",
        "platform/dynamic.ts -> ../src/cli.ts",
        "platform/inline-type.ts -> ../src/errors.ts",
        "platform/reexport.ts -> ../src/common/paths.ts",
        "platform/type-query.ts -> ../src/config/paths.ts",
        "platform/value.ts -> ../src/errors.ts",
      ].sort(),
    );
    expect(found.ffiOutsidePlatform.sort()).toEqual(
      ["src/deep/dynamic-ffi.ts -> bun:ffi", "src/static-ffi.ts -> bun:ffi", "test/type-ffi.ts -> bun:ffi"].sort(),
    );
  });
});
