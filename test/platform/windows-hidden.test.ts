// Files the OS marks hidden (FILE_ATTRIBUTE_HIDDEN, FILE_ATTRIBUTE_SYSTEM; `attrib +h`, `attrib +s`)
// count as hidden on Windows: list_directory, find_files, search_text and directory_tree leave them
// out unless the workdir sets allow_hidden, exactly as for dot-files. End to end through
// dist/serverfs-windows-x64.exe; runs on Windows and in the Windows lane under Wine (which keeps
// DOS attributes in the user.DOSATTRIB extended attribute); skips elsewhere, where no such mark exists.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ok } from "../mcp/helpers.ts";
import { callTool, connectWindowsServe, removeTree } from "../support/windows-serve.ts";

const onWindows = process.platform === "win32";

let base = "";
let client: Client;

interface Node {
  name: string;
  children?: Node[];
}
function flat(node: Node, prefix = ""): string[] {
  return (node.children ?? []).flatMap((c) => [`${prefix}${c.name}`, ...flat(c, `${prefix}${c.name}/`)]);
}

function attrib(flag: string, p: string): void {
  const r = spawnSync("attrib.exe", [flag, p], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`attrib ${flag} exited ${r.status}: ${r.stdout}${r.stderr}`);
}

/** A tree with a visible file, a hidden one, a system one and a hidden directory, each naming "needle". */
function corpus(dir: string): void {
  fs.mkdirSync(path.join(dir, "hidden-dir"), { recursive: true });
  for (const name of ["visible.txt", "hidden.txt", "system.txt", "hidden-dir/inner.txt"]) fs.writeFileSync(path.join(dir, name), "a needle\n");
  attrib("+h", path.join(dir, "hidden.txt"));
  attrib("+s", path.join(dir, "system.txt"));
  attrib("+h", path.join(dir, "hidden-dir"));
}

describe.skipIf(!onWindows)("OS-hidden files on serverfs-windows-x64.exe (needs Windows or the Wine lane)", () => {
  beforeAll(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-winhidden-")));
    corpus(path.join(base, "plain"));
    corpus(path.join(base, "shown"));
    const config = path.join(base, "serverfs.toml");
    const workdir = (alias: string, extra: string[]) => ["[[workdirs]]", `alias = "${alias}"`, `path = ${JSON.stringify(path.join(base, alias))}`, ...extra];
    fs.writeFileSync(config, [...workdir("plain", []), ...workdir("shown", ["allow_hidden = true"]), ""].join("\n"));
    client = await connectWindowsServe("windows-hidden-test", ["--config", config], base, base);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    if (base !== "") {
      for (const alias of ["plain", "shown"]) for (const p of ["hidden.txt", "system.txt", "hidden-dir"]) attrib("-h", path.join(base, alias, p));
      attrib("-s", path.join(base, "plain", "system.txt"));
      attrib("-s", path.join(base, "shown", "system.txt"));
      removeTree(base);
    }
  });

  const names = async (workdir: string) => {
    const call = (name: string, args: Record<string, unknown>) => callTool(client, name, { workdir, ...args });
    const listed = ok<{ entries: Array<{ name: string }> }>(await call("list_directory", {})).entries.map((e) => e.name).sort();
    const found = ok<{ matches: Array<{ path: string }> }>(await call("find_files", { pattern: "**" })).matches.map((m) => m.path).sort();
    const hits = ok<{ matches: Array<{ path: string }> }>(await call("search_text", { query: "needle" })).matches.map((m) => m.path).sort();
    const tree = flat(ok<{ tree: Node }>(await call("directory_tree", { max_depth: 5 })).tree).sort();
    return { listed, found, hits, tree };
  };

  test("hidden and system files and a hidden directory are absent from list, find, search and tree", async () => {
    // the marks really are there: the corpus is what the test says it is
    const shown = spawnSync("attrib.exe", [path.join(base, "plain", "hidden.txt")], { encoding: "utf8" }).stdout;
    expect(shown).toMatch(/^\s*A?\s*H/m);
    expect(await names("plain")).toEqual({ listed: ["visible.txt"], found: ["visible.txt"], hits: ["visible.txt"], tree: ["visible.txt"] });
  });

  test("with allow_hidden they are listed, found, searched and in the tree", async () => {
    const all = ["hidden-dir", "hidden.txt", "system.txt", "visible.txt"];
    const files = ["hidden-dir/inner.txt", "hidden.txt", "system.txt", "visible.txt"];
    expect(await names("shown")).toEqual({ listed: all, found: files, hits: files, tree: ["hidden-dir", "hidden-dir/inner.txt", "hidden.txt", "system.txt", "visible.txt"] });
  });
});
