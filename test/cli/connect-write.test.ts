// connect --write's file handling on real files: a host that rewrites or creates its file while
// serverfs edits it wins (nothing of ours is written over it), backups never replace an older
// backup, and a path that cannot hold the file is a coded error with nothing changed.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { writeHostConfig } from "../../src/commands/connect-write.ts";
import { ServerfsError } from "../../src/errors.ts";
import { tempDir } from "../support/temp.ts";

const NOW = new Date("2026-12-01T10:15:00.123Z");

function refusal(run: () => unknown): ServerfsError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ServerfsError);
    return err as ServerfsError;
  }
  throw new Error("expected a refusal");
}

describe("writeHostConfig", () => {
  test("edits an existing file: backup first with the old bytes and mode, then the new text", () => {
    const dir = tempDir();
    const file = { path: path.join(dir, "mcp.json"), label: "mcp.json" };
    fs.writeFileSync(file.path, "old\n", { mode: 0o600 });
    const seen: Array<string | null> = [];
    const out = writeHostConfig(file, (current) => (seen.push(current), { text: "new\n", replaced: false }), NOW);
    expect(seen).toEqual(["old\n"]);
    expect(out).toEqual({ created: false, replaced: false, backupLabel: "mcp.json.serverfs-backup-20261201T101500Z" });
    expect(fs.readFileSync(file.path, "utf8")).toBe("new\n");
    expect(fs.readFileSync(`${file.path}.serverfs-backup-20261201T101500Z`, "utf8")).toBe("old\n");
    expect(fs.statSync(`${file.path}.serverfs-backup-20261201T101500Z`).mode & 0o777).toBe(0o600);
  });

  test("a second write in the same second keeps both backups", () => {
    const dir = tempDir();
    const file = { path: path.join(dir, "c.json"), label: "c.json" };
    fs.writeFileSync(file.path, "v1");
    writeHostConfig(file, () => ({ text: "v2", replaced: false }), NOW);
    const second = writeHostConfig(file, () => ({ text: "v3", replaced: true }), NOW);
    expect(second.backupLabel).toBe("c.json.serverfs-backup-20261201T101500Z-2");
    expect(fs.readFileSync(`${file.path}.serverfs-backup-20261201T101500Z`, "utf8")).toBe("v1");
    expect(fs.readFileSync(`${file.path}.serverfs-backup-20261201T101500Z-2`, "utf8")).toBe("v2");
    expect(fs.readFileSync(file.path, "utf8")).toBe("v3");
  });

  test("the host rewrites its file during the edit: refused, the host's bytes stay, no backup", () => {
    const dir = tempDir();
    const file = { path: path.join(dir, ".claude.json"), label: "~/.claude.json" };
    fs.writeFileSync(file.path, '{"numStartups": 1}');
    const err = refusal(() =>
      writeHostConfig(file, (current) => {
        fs.writeFileSync(file.path, '{"numStartups": 2}'); // what Claude Code does on every start
        return { text: `${current}!`, replaced: false };
      }),
    );
    expect(err.code).toBe("HOST_CONFIG_UNEDITABLE");
    expect(err.message).toBe("~/.claude.json: changed while serverfs was editing it; nothing was written, run the command again");
    expect(fs.readFileSync(file.path, "utf8")).toBe('{"numStartups": 2}');
    expect(fs.readdirSync(dir)).toEqual([".claude.json"]);
  });

  test("the host creates the file during the edit: refused, the host's file stays", () => {
    const dir = tempDir();
    const file = { path: path.join(dir, "sub", "mcp.json"), label: "mcp.json" };
    const err = refusal(() =>
      writeHostConfig(file, () => {
        fs.mkdirSync(path.dirname(file.path));
        fs.writeFileSync(file.path, "{ \"host\": true }");
        return { text: "{}", replaced: false };
      }),
    );
    expect(err.code).toBe("HOST_CONFIG_UNEDITABLE");
    expect(err.message).toContain("appeared while serverfs was writing it");
    expect(fs.readFileSync(file.path, "utf8")).toBe('{ "host": true }');
    expect(fs.readdirSync(path.dirname(file.path))).toEqual(["mcp.json"]);
  });

  test("an editor's refusal writes nothing; a directory in the way and a file in the directory path are coded errors", () => {
    const dir = tempDir();
    const file = { path: path.join(dir, "c.json"), label: "c.json" };
    fs.writeFileSync(file.path, "x");
    const refused = refusal(() =>
      writeHostConfig(file, () => {
        throw new ServerfsError("HOST_CONFIG_INVALID", "c.json: not valid JSON; nothing was written");
      }),
    );
    expect(refused.code).toBe("HOST_CONFIG_INVALID");
    expect(fs.readdirSync(dir)).toEqual(["c.json"]);
    fs.mkdirSync(path.join(dir, "d.json"));
    expect(refusal(() => writeHostConfig({ path: path.join(dir, "d.json"), label: "d.json" }, () => ({ text: "", replaced: false }))).message).toBe(
      "d.json: is not a regular file; nothing was written",
    );
    fs.writeFileSync(path.join(dir, "f"), "");
    const underFile = refusal(() => writeHostConfig({ path: path.join(dir, "f", "c.json"), label: "f/c.json" }, () => ({ text: "{}", replaced: false })));
    expect([underFile.code, underFile.message]).toEqual(["IO_ERROR", "f/c.json: a part of its directory is not a directory; nothing was written"]);
  });
});
