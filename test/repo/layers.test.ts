// The import rules of docs/architecture.md ("Layers"), checked on the sources:
// - no import circle anywhere in src/ or platform/ (type-only and dynamic imports count);
// - platform/ imports nothing from src/;
// - in src/, no import points up a layer (the order is LAYERS below);
// - src/fs/ names no OS: it imports no OS-named platform module and tests no platform name.
// Each rule's fixture case proves its check reports what it exists to catch.
import { describe, expect, test } from "bun:test";
import { importGraph, readSources } from "./imports.ts";

/** Lowest first; a module may import its own layer's modules and those of lower layers. */
const LAYERS: readonly (readonly string[])[] = [
  ["platform/"],
  ["src/common/", "src/errors.ts", "src/version.ts"],
  ["src/config/", "src/log.ts"],
  ["src/runtimes/"],
  ["src/fs/"],
  ["src/bridge/"],
  ["src/mcp/"],
  ["src/doctor/"],
  ["src/commands/"],
  ["src/cli.ts"],
];

function layerOf(file: string): number {
  const i = LAYERS.findIndex((prefixes) => prefixes.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p)));
  return i;
}

/** Every import circle (a strongly connected component of more than one file, or a self-import), each sorted. */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** "from -> to" for every import that points up a layer (or out of platform/ into src/). */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(from);
    for (const to of targets) {
      if (!to.startsWith("src/") && !to.startsWith("platform/")) continue;
      const b = layerOf(to);
      if (a === -1 || b === -1 || b > a) out.push(`${from} -> ${to}`);
    }
  }
  return out.sort();
}

/**
 * Files outside src/fs/ that still branch on the OS themselves (a debt: each should reach the OS
 * through a platform/ port, as src/fs/ does). The list only shrinks; docs/architecture.md names it.
 */
const STILL_NAMING_AN_OS = [
  "src/bridge/daemon.ts",
  "src/bridge/ipc/server.windows.ts",
  "src/bridge/store/db.ts",
  "src/commands/connect-hosts.ts",
  "src/commands/serve.ts",
  "src/config/executable.ts",
  "src/config/home-path.ts",
  "src/config/paths.ts",
  "src/doctor/checks/bridge.ts",
  "src/doctor/checks/native-approvals.ts",
  "src/doctor/checks/provider-env-file.ts",
  "src/doctor/checks/recovery-guards.ts",
  "src/doctor/checks/state-dir.ts",
  "src/doctor/checks/version.ts",
  "src/doctor/checks/workdir.ts",
  "src/runtimes/acp/adapter.ts",
  "src/runtimes/fake/provider.ts",
  "src/runtimes/kernel/child-env.ts",
  "src/runtimes/kernel/provider-env.ts",
];

const OS_MODULE = /(^|\/)(linux|darwin|windows)(\/|\.ts$|[-.])|[-.](linux|darwin|windows)\.ts$/;
const OS_TEST = /\b(IS_LINUX|IS_DARWIN|IS_WINDOWS|process\.platform)\b|["'](linux|darwin|win32)["']/;

/** "file: what" for each OS a file under `prefix` names: an OS-named module it imports (platform/ or src/), or a platform test. */
export function osNamed(files: Record<string, string>, graph: Map<string, string[]>, prefix: string): string[] {
  const out: string[] = [];
  for (const [file, source] of Object.entries(files)) {
    if (!file.startsWith(prefix)) continue;
    for (const to of graph.get(file) ?? []) if (OS_MODULE.test(to.replace(/^(platform|src)\//, ""))) out.push(`${file}: imports ${to}`);
    const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    const m = OS_TEST.exec(code);
    if (m) out.push(`${file}: tests ${m[0]}`);
  }
  return out.sort();
}

describe("the checks themselves (fixtures)", () => {
  test("a circle is reported, through a type-only import too; a chain is not", () => {
    const g = importGraph({
      "src/fs/a.ts": 'import { b } from "./b.ts";\n',
      "src/fs/b.ts": 'import type { C } from "./c.ts";\n',
      "src/fs/c.ts": 'export type { A } from "./a.ts";\n',
      "src/fs/d.ts": 'import { a } from "./a.ts";\n',
    });
    expect(circles(g)).toEqual([["src/fs/a.ts", "src/fs/b.ts", "src/fs/c.ts"]]);
    expect(circles(importGraph({ "src/fs/a.ts": 'import "./b.ts";\n', "src/fs/b.ts": "" }))).toEqual([]);
  });

  test("an import up a layer and one from platform/ into src/ are reported; one down is not", () => {
    const g = importGraph({
      "src/config/load.ts": 'import { x } from "../bridge/service.ts";\nimport { y } from "../common/utf8.ts";\n',
      "platform/fs/x.ts": 'import { z } from "../../src/errors.ts";\n',
      "src/mcp/tool.ts": 'import { w } from "../fs/index.ts";\n',
    });
    expect(upwardImports(g)).toEqual(["platform/fs/x.ts -> src/errors.ts", "src/config/load.ts -> src/bridge/service.ts"]);
  });

  test("an OS-named module and a platform test are reported in src/fs; a port is not", () => {
    const files = {
      "src/fs/a.ts": 'import { openat2 } from "../../platform/fs/linux.ts";\nimport { r } from "../../platform/fs/resolve-windows.ts";\n',
      "src/fs/b.ts": 'import { IS_LINUX } from "../../platform/os.ts";\nif (IS_LINUX) {}\n',
      "src/fs/c.ts": 'const win = platform === "win32";\n',
      "src/fs/d.ts": 'import { workerOpener } from "../../platform/fs/search-port.ts";\n// on linux this is openat2\n',
    };
    expect(osNamed(files, importGraph(files), "src/fs/")).toEqual([
      "src/fs/a.ts: imports platform/fs/linux.ts",
      "src/fs/a.ts: imports platform/fs/resolve-windows.ts",
      "src/fs/b.ts: tests IS_LINUX",
      'src/fs/c.ts: tests "win32"',
    ]);
  });
});

describe("the repository", () => {
  const files = readSources("src", "platform");
  const graph = importGraph(files);

  test("every file of src/ has a layer", () => {
    expect(Object.keys(files).filter((f) => layerOf(f) === -1)).toEqual([]);
  });

  test("no import circle in src/ or platform/", () => {
    expect(circles(graph)).toEqual([]);
  });

  test("no import points up a layer, and platform/ imports nothing from src/", () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  test("src/fs/ names no OS", () => {
    expect(osNamed(files, graph, "src/fs/")).toEqual([]);
  });

  test("elsewhere in src/, only the files listed in docs/architecture.md still name an OS, and no new one does", () => {
    const naming = [...new Set(osNamed(files, graph, "src/").map((line) => line.slice(0, line.indexOf(":"))))].sort();
    expect(naming).toEqual([...STILL_NAMING_AN_OS].sort());
  });
});
