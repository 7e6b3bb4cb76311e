// directory_tree and edit_text_file's dry run through the real MCP surface: the recursive output
// schema as published (a host's validator accepts the answer and rejects a malformed nested node),
// the compact text rendering before the JSON mirror, coded refusals, the audit line (flags and
// counts, never diff text), and, against a real `serve` with the Agent Bridge's writer lease held
// by another process, a dry run that answers while the edit is WORKDIR_BUSY.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { leases } from "../../platform/index.ts";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { loadRegistry } from "../../src/config/load.ts";
import { bareEnv, connectServe } from "../support/mcp.ts";
import { type Harness, connect, errorCode, makeRegistry, ok, removeDir, tempDir } from "./helpers.ts";

let base: string;
let h: Harness;

beforeAll(async () => {
  base = tempDir();
  const docs = path.join(base, "docs");
  fs.mkdirSync(path.join(docs, "src", "lib"), { recursive: true });
  fs.writeFileSync(path.join(docs, "README.md"), "hello\n");
  fs.writeFileSync(path.join(docs, "src", "main.ts"), "x".repeat(1234));
  fs.writeFileSync(path.join(docs, "src", "lib", "deep.ts"), "");
  fs.writeFileSync(path.join(docs, ".env"), "SECRET=1\n");
  fs.symlinkSync("src", path.join(docs, "link"));
  fs.mkdirSync(path.join(base, "work"));
  fs.writeFileSync(path.join(base, "work", "notes.txt"), "alpha\nSECRET-CONTENT-MARKER\nomega\n");
  h = await connect(
    makeRegistry([
      { alias: "docs", path: docs },
      { alias: "work", path: path.join(base, "work"), read_only: false },
    ]),
  );
});
afterAll(async () => {
  await h.close();
  removeDir(base);
});

describe("directory_tree over MCP", () => {
  test("structuredContent is the nested tree; the first text block renders it, the last mirrors the JSON", async () => {
    const res = await h.call("directory_tree", { workdir: "docs", max_depth: 2 });
    const out = ok<Record<string, unknown>>(res);
    expect(out).toEqual({
      workdir: "docs",
      path: "",
      max_depth: 2,
      limit: 500,
      tree: {
        name: "",
        type: "directory",
        children: [
          { name: "README.md", type: "file", size: 6 },
          { name: "link", type: "symlink" },
          {
            name: "src",
            type: "directory",
            children: [
              { name: "lib", type: "directory" },
              { name: "main.ts", type: "file", size: 1234 },
            ],
          },
        ],
      },
      returned: 5,
      truncated: false,
      depth_limited: true,
      ignored: 0,
    });
    expect(res.content).toHaveLength(2);
    expect(res.content[0]).toEqual({
      type: "text",
      text: [
        "./",
        "  README.md  6 B",
        "  link@  (symlink, not followed)",
        "  src/",
        "    lib/  …",
        "    main.ts  1234 B",
        "(5 entries; directories marked … are deeper than max_depth 2)",
      ].join("\n"),
    });
    expect(JSON.stringify(res)).not.toContain(base);
  });

  test("the published output schema is recursive and binds every level: a bad nested node is refused", async () => {
    const tool = (await h.client.listTools()).tools.find((t) => t.name === "directory_tree")!;
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const validate = new AjvJsonSchemaValidator().getValidator(tool.outputSchema as never);
    const good = ok<{ tree: { children: { children?: { type: string }[] }[] } }>(await h.call("directory_tree", { workdir: "docs", max_depth: 3 }));
    expect(validate(good).valid).toBe(true);
    const bad = structuredClone(good);
    bad.tree.children[2]!.children![0]!.type = "door";
    expect(validate(bad).valid).toBe(false);
    expect(validate({ code: "PATH_NOT_FOUND", message: "docs:x — does not exist" }).valid).toBe(true);
  });

  test("refusals are coded; a cut tree says truncated in the JSON and in the text", async () => {
    expect(errorCode(await h.call("directory_tree", { workdir: "docs", path: "../work" }))).toBe("PATH_OUTSIDE_WORKDIR");
    expect(errorCode(await h.call("directory_tree", { workdir: "docs", path: "link" }))).toBe("SYMLINK_NOT_ALLOWED");
    expect(errorCode(await h.call("directory_tree", { workdir: "docs", path: ".env" }))).toBe("HIDDEN_PATH_NOT_ALLOWED");
    expect(errorCode(await h.call("directory_tree", { workdir: "docs", max_depth: 0 }))).toBe("INVALID_ARGUMENT");
    expect(errorCode(await h.call("directory_tree", { workdir: "docs", follow: true }))).toBe("INVALID_ARGUMENT");
    const res = await h.call("directory_tree", { workdir: "docs", limit: 2 });
    expect(ok(res)).toMatchObject({ returned: 2, truncated: true, tree: { truncated: true } });
    const text = (res.content[0] as { text: string }).text;
    expect(text.split("\n")[0]).toBe("./  [truncated]");
    expect(text.endsWith("(2 entries; truncated: some directories were not fully listed)")).toBe(true);
  });
});

describe("edit_text_file dry_run over MCP", () => {
  test("the dry run returns the diff and writes nothing; the audit line has the flag, never the diff", async () => {
    const file = path.join(base, "work", "notes.txt");
    const before = fs.readFileSync(file);
    const rev = ok<{ revision: string }>(await h.call("stat_file", { workdir: "work", path: "notes.txt" })).revision;
    const edits = [{ old_text: "alpha", new_text: "beta" }];
    const dry = ok<Record<string, unknown>>(await h.call("edit_text_file", { workdir: "work", path: "notes.txt", expected_revision: rev, edits, dry_run: true }));
    const diff = "--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n-alpha\n+beta\n SECRET-CONTENT-MARKER\n omega\n";
    expect(dry).toMatchObject({ edited: false, dry_run: true, revision: rev, diff, diff_truncated: false });
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.readdirSync(path.join(base, "work"))).toEqual(["notes.txt"]);
    expect(h.logs.at(-1)).toMatchObject({ tool: "edit_text_file", success: true, dry_run: true, edited: false, edit_count: 1 });
    const real = ok<Record<string, unknown>>(await h.call("edit_text_file", { workdir: "work", path: "notes.txt", expected_revision: rev, edits }));
    expect(real).toMatchObject({ edited: true, dry_run: false, diff, diff_truncated: false });
    expect(fs.readFileSync(file, "utf8")).toBe("beta\nSECRET-CONTENT-MARKER\nomega\n");
    expect(h.logs.at(-1)).toMatchObject({ tool: "edit_text_file", success: true, dry_run: false, edited: true });
    expect(h.logText()).not.toContain("SECRET-CONTENT-MARKER");
    expect(h.logText()).not.toContain("@@");
    // a stale revision is refused in a dry run as in an edit
    expect(errorCode(await h.call("edit_text_file", { workdir: "work", path: "notes.txt", expected_revision: rev, edits, dry_run: true }))).toBe("REVISION_CONFLICT");
  });
});

test("against a real serve, a dry run answers while another process holds the writer lease", async () => {
  const lb = tempDir();
  fs.mkdirSync(path.join(lb, "state"));
  fs.mkdirSync(path.join(lb, "w"));
  fs.writeFileSync(path.join(lb, "w", "f.txt"), "one\n");
  const toml = path.join(lb, "serverfs.toml");
  fs.writeFileSync(
    toml,
    ["[server]", `state_dir = ${JSON.stringify(path.join(lb, "state"))}`, "[[workdirs]]", 'alias = "w"', `path = ${JSON.stringify(path.join(lb, "w"))}`, "read_only = false", "[agent]", "enabled = true", ""].join("\n"),
  );
  const { registry } = await loadRegistry({ configFile: toml });
  const { lockFile } = leaseFiles(registry, "w");
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  fs.writeFileSync(lockFile, "");
  const held = leases().tryAcquire(lockFile);
  expect(held).not.toBeNull();
  const { client } = await connectServe({ args: ["--config", toml], cwd: lb, env: bareEnv(lb), clientName: "dry-lease" });
  try {
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
    const rev = ok<{ revision: string }>(await call("stat_file", { workdir: "w", path: "f.txt" })).revision;
    const args = { workdir: "w", path: "f.txt", expected_revision: rev, edits: [{ old_text: "one", new_text: "two" }] };
    expect(ok(await call("edit_text_file", { ...args, dry_run: true }))).toMatchObject({ dry_run: true, diff: "--- f.txt\n+++ f.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n" });
    expect(errorCode(await call("edit_text_file", args))).toBe("WORKDIR_BUSY");
    expect(fs.readFileSync(path.join(lb, "w", "f.txt"), "utf8")).toBe("one\n");
    held!.release();
    expect(ok(await call("edit_text_file", args))).toMatchObject({ edited: true });
    expect(fs.readFileSync(path.join(lb, "w", "f.txt"), "utf8")).toBe("two\n");
  } finally {
    await client.close();
    removeDir(lb);
  }
});
