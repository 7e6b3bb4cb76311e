// Guarded mutations from several real `serve` processes (no Agent Bridge) over one workdir: the
// revision check and the rename or unlink are one step among serverfs writers (the directory lock,
// docs/security.md), so every acknowledged change is on disk exactly once. Each client retries
// on REVISION_CONFLICT, FILE_BUSY and the other answers a lost race gives; the final state is
// computed from the acknowledged operations alone and compared exactly with the disk.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { bareEnv, connectServe, type ServeClient } from "../support/mcp.ts";
import { removeDir, tempDir } from "./helpers.ts";

// four serve processes start from source on a loaded machine: a ceiling, not a timing assertion
setDefaultTimeout(180_000);

const SERVES = 4;
const PER_SERVE = 25;
/** Answers that mean "someone else changed it first": read again and retry. */
const RACE_LOST = new Set(["REVISION_CONFLICT", "FILE_BUSY", "PATH_NOT_FOUND", "PATH_ALREADY_EXISTS"]);
/** A read that overlapped a replacement (the old inode lost its name meanwhile) also just retries. */
const READ_RACE_LOST = new Set([...RACE_LOST, "FILE_CHANGED_DURING_READ"]);

let base: string;
let root: string;
let clients: ServeClient[] = [];

beforeAll(async () => {
  base = tempDir("serverfs-writers-");
  root = path.join(base, "w");
  fs.mkdirSync(root);
  const toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(
    toml,
    ["[server]", `state_dir = ${JSON.stringify(path.join(base, "state"))}`, "[[workdirs]]", 'alias = "w"', `path = ${JSON.stringify(root)}`, "read_only = false", ""].join("\n"),
  );
  clients = await Promise.all(
    Array.from({ length: SERVES }, (_, i) => connectServe({ args: ["--config", toml], cwd: base, env: bareEnv(base), clientName: `writer-${i}` })),
  );
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  removeDir(base);
});

type Answer = { ok: true; out: Record<string, unknown> } | { ok: false; code: string };

async function ask(c: ServeClient, name: string, args: Record<string, unknown>): Promise<Answer> {
  const res: CallToolResult = await c.call(name, { workdir: "w", ...args });
  const sc = res.structuredContent as Record<string, unknown>;
  return res.isError ? { ok: false, code: String(sc.code) } : { ok: true, out: sc };
}

/** The answer of an acknowledged call, or null when it lost a race; anything else fails the test. */
function acked(a: Answer, what: string): Record<string, unknown> | null {
  if (a.ok) return a.out;
  if ((what === "read_text_file" ? READ_RACE_LOST : RACE_LOST).has(a.code)) return null;
  throw new Error(`${what}: unexpected ${a.code}`);
}

/** Every entry below `dir`, as workdir-relative paths (temp files and strays included). */
function entriesBelow(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel === "" ? e.name : `${rel}/${e.name}`;
    out.push(child);
    if (e.isDirectory()) out.push(...entriesBelow(dir, child));
  }
  return out.sort();
}

describe("concurrent serve processes", () => {
  test("4 serves x 25 guarded appends to one file: 100 acknowledged, each line there exactly once", async () => {
    const dir = path.join(root, "appends");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "log.txt"), "");
    const acknowledged: string[] = [];
    await Promise.all(
      clients.map(async (c, w) => {
        for (let n = 0; n < PER_SERVE; n++) {
          const line = `w${w}-${n}\n`;
          for (let attempt = 0; ; attempt++) {
            if (attempt > 10_000) throw new Error(`${line.trim()}: no progress`);
            const read = acked(await ask(c, "read_text_file", { path: "appends/log.txt" }), "read_text_file");
            if (read === null) continue;
            const text = String(read.content);
            const edits = text === "" ? [{ old_text: "", new_text: line }] : [{ old_text: text, new_text: text + line }];
            const done = acked(await ask(c, "edit_text_file", { path: "appends/log.txt", expected_revision: read.revision, edits }), "edit_text_file");
            if (done === null) continue;
            acknowledged.push(line);
            break;
          }
        }
      }),
    );
    expect(acknowledged.length).toBe(SERVES * PER_SERVE);
    const onDisk = fs.readFileSync(path.join(dir, "log.txt"), "utf8");
    expect(onDisk.split("\n").slice(0, -1).sort()).toEqual(acknowledged.map((l) => l.trim()).sort());
    // nothing else: no temp file of any writer was left behind
    expect(entriesBelow(dir)).toEqual(["log.txt"]);
  });

  test("appends, moves between two directories and deletes: the disk is exactly what the acknowledged operations say", async () => {
    // The token t0.txt lives at a/t0.txt or b/t0.txt, or nowhere (then the next writer creates
    // it at a/). A file's first line is the id of the create that made it (unique), later lines
    // the appends acknowledged on it. An acknowledged move of id H flips H between a/ and b/; an
    // acknowledged delete ends H. Two reads can miss a token moving between them, so two ids may
    // live at once (one at a/, one at b/); the model keeps every id apart, so that is exact too.
    const mix = path.join(root, "mix");
    fs.mkdirSync(path.join(mix, "a"), { recursive: true });
    fs.mkdirSync(path.join(mix, "b"));
    const token = "t0.txt";
    const created = new Set<string>();
    const appended = new Map<string, string[]>(); // id -> acknowledged lines
    const moves = new Map<string, number>(); // id -> acknowledged moves
    const deleted = new Set<string>();
    let acks = 0;

    await Promise.all(
      clients.map(async (c, w) => {
        let seed = 0x9e3779b9 ^ (w * 7919);
        const next = () => {
          seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
          return seed >>> 8;
        };
        for (let n = 0; n < PER_SERVE; n++) {
          const stamp = `w${w}-${n}`;
          for (let attempt = 0; ; attempt++) {
            if (attempt > 10_000) throw new Error(`${stamp}: no progress`);
            const roll = next() % 100;
            let found: { dir: "a" | "b"; text: string; revision: string } | null = null;
            for (const dir of ["a", "b"] as const) {
              const read = acked(await ask(c, "read_text_file", { path: `mix/${dir}/${token}` }), "read_text_file");
              if (read !== null) {
                found = { dir, text: String(read.content), revision: String(read.revision) };
                break;
              }
            }
            if (found === null) {
              const id = `id:${stamp}`;
              if (acked(await ask(c, "create_text_file", { path: `mix/a/${token}`, content: `${id}\n` }), "create_text_file") === null) continue;
              created.add(id);
              acks++;
              break;
            }
            const id = found.text.split("\n")[0] as string;
            const here = `mix/${found.dir}/${token}`;
            if (roll < 70) {
              const line = `${id}+${stamp}`;
              const edit = { old_text: found.text, new_text: `${found.text}${line}\n` };
              if (acked(await ask(c, "edit_text_file", { path: here, expected_revision: found.revision, edits: [edit] }), "edit_text_file") === null) continue;
              appended.set(id, [...(appended.get(id) ?? []), line]);
            } else if (roll < 90) {
              const there = `mix/${found.dir === "a" ? "b" : "a"}/${token}`;
              if (acked(await ask(c, "move_file", { source: here, destination: there, expected_revision: found.revision }), "move_file") === null) continue;
              moves.set(id, (moves.get(id) ?? 0) + 1);
            } else {
              if (acked(await ask(c, "delete_file", { path: here, expected_revision: found.revision }), "delete_file") === null) continue;
              deleted.add(id);
            }
            acks++;
            break;
          }
        }
      }),
    );

    expect(acks).toBe(SERVES * PER_SERVE);
    // the mix really mixed (appends 70, moves 20, deletes 10 in every 100 rolls)
    expect(Math.min(appended.size, moves.size, deleted.size)).toBeGreaterThan(0);
    // What the acknowledged operations say, file by file.
    const expected = new Map<string, string>();
    for (const id of created) {
      if (deleted.has(id)) continue;
      const where = `${(moves.get(id) ?? 0) % 2 === 0 ? "a" : "b"}/${token}`;
      expect(expected.has(where)).toBe(false);
      expected.set(where, [id, ...(appended.get(id) ?? []).sort()].join("\n"));
    }
    // What the disk holds: the same files, each with its id line and exactly its appends.
    const actual = new Map<string, string>();
    for (const rel of entriesBelow(mix)) {
      if (rel === "a" || rel === "b") continue;
      const [id, ...lines] = fs.readFileSync(path.join(mix, rel), "utf8").split("\n").slice(0, -1);
      actual.set(rel, [id, ...lines.sort()].join("\n"));
    }
    expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
    // every acknowledged operation touched a file the run created, and deletes ended real ids
    for (const id of [...appended.keys(), ...moves.keys(), ...deleted]) expect(created.has(id)).toBe(true);
    expect(deleted.size + expected.size).toBe(created.size);
  });
});
