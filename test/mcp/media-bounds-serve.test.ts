// read_media_file through a real `serverfs serve` (from source, or the executable
// SERVERFS_TEST_SERVE_BIN names: .ci/run's compiled-binary lane), for its two hardening classes.
// Memory: twenty reads in a row of the largest image allowed (5 MiB, the default max_media_bytes)
// once climbed to ~195 MB; in the compiled lane peak RSS stays at or below 120 MB and RSS is back
// within 20 MB of idle 2 s after the last answer. Sniffing: text with a byte order mark (UTF-16LE
// and UTF-32LE open with FF FE, which looks like an MPEG frame sync) was served as audio/mpeg; every
// BOM text is now UNSUPPORTED_MEDIA_TYPE. Other requests are answered while a large read runs, by
// construction: serve reads a media file in 1 MiB steps and gives the event loop back between
// them, so a small read_text_file, a ping and a tools/list written after a 5 MiB read in the
// same write are all answered before it, whatever the machine's speed: they need no step that
// waits for the event loop, the large read needs five (without the steps the large read, started
// first, answers before the small read: the test fails). Media reads and downloads run one at a
// time, each once the previous answer is written: ten 5 MiB reads written at once stay within
// the bound too. Nothing on disk changes.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { YIELD_BYTES } from "../../src/fs/binary.ts";
import { BIN, expectServeMemory, FrameServe as Serve, type FrameReply as Reply } from "../support/frame-serve.ts";
import { isLinux } from "../support/proc.ts";
import { removeDir, tempDir } from "../support/temp.ts";
import { treeSnapshot } from "../support/tree.ts";

const MiB = 1024 * 1024;
/** The default max_media_bytes: the largest image read_media_file serves. */
const MAX_MEDIA = 5 * MiB;
// a ceiling for a loaded 2-core machine, not a timing assertion
setDefaultTimeout(240_000);
/**
 * Reads in a row and at once: the counts that once drove serve's memory up, in the compiled lane
 * where memory is asserted; from source (npm test, no memory figures) a few show the same answers.
 */
const IN_ROW = BIN ? 20 : 3;
const AT_ONCE = BIN ? 10 : 3;

const TEXT = "Grüße aus dem Dateisystem: plain text, never media.\n".repeat(40);
const BOM_TEXTS: Record<string, Buffer> = {
  "utf-8-bom.txt": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT, "utf8")]),
  "utf-16le-bom.txt": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, "utf16le")]),
  "utf-16be-bom.txt": Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(Buffer.from(TEXT, "utf16le")).swap16()]),
  "utf-32le-bom.txt": Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), ...[...TEXT].map((c) => { const b = Buffer.alloc(4); b.writeUInt32LE(c.codePointAt(0)!); return b; })]),
  "utf-32be-bom.txt": Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), ...[...TEXT].map((c) => { const b = Buffer.alloc(4); b.writeUInt32BE(c.codePointAt(0)!); return b; })]),
};

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const readMedia = (id: unknown, p: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "read_media_file", arguments: { workdir: "w", path: p } } });

describe.skipIf(!isLinux)("read_media_file through real serve (Linux: memory from /proc)", () => {
  let base = "";
  let workdir = "";
  let image = Buffer.alloc(0);
  beforeAll(() => {
    base = tempDir("sfs-media-bounds-");
    workdir = path.join(base, "w");
    fs.mkdirSync(workdir);
    // a real PNG (made by ImageMagick, test/fixtures/media/README.md) padded after its IEND to exactly the limit
    const png = fs.readFileSync(path.join(import.meta.dir, "../fixtures/media/image.png"));
    image = Buffer.concat([png, Buffer.alloc(MAX_MEDIA - png.length, 0xa5)]);
    fs.writeFileSync(path.join(workdir, "max.png"), image);
    fs.writeFileSync(path.join(workdir, "small.txt"), "small\n");
    for (const [name, bytes] of Object.entries(BOM_TEXTS)) fs.writeFileSync(path.join(workdir, name), bytes);
    fs.writeFileSync(path.join(base, "serverfs.toml"), `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(workdir)}\nread_only = true\nbinary_transfer_enabled = false\n`);
  });
  afterAll(() => removeDir(base));

  /** serve on the workdir, initialized (2025 era, which has ping), its tools listed and one small media read served: the idle state. */
  async function open(): Promise<{ s: Serve; idle: number }> {
    const s = new Serve(path.join(base, "serverfs.toml"), base);
    await s.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "media-bounds", version: "0" } } }, { jsonrpc: "2.0", method: "notifications/initialized" });
    await s.reply("init");
    await s.send({ jsonrpc: "2.0", id: "list", method: "tools/list" });
    await s.reply("list");
    await s.send(readMedia("warm", "utf-8-bom.txt"));
    await s.reply("warm");
    return { s, idle: s.status("VmRSS") };
  }

  /** The answer to a read of max.png is the whole image, as an image block of type image/png. */
  function expectImage(r: Reply): void {
    expect(r.result?.isError).toBeUndefined();
    expect(r.result?.structuredContent).toMatchObject({ workdir: "w", path: "max.png", kind: "image", mime_type: "image/png", size: MAX_MEDIA });
    const block = r.result?.content?.[0];
    expect({ type: block?.type, mimeType: block?.mimeType }).toEqual({ type: "image", mimeType: "image/png" });
    expect(sha256(Buffer.from(block?.data ?? "", "base64"))).toBe(sha256(image));
  }

  test("5 MiB image reads in a row (twenty in the compiled lane): every answer whole, peak RSS ≤ 120 MB, back near idle after", async () => {
    const before = treeSnapshot(workdir);
    const { s, idle } = await open();
    for (let i = 0; i < IN_ROW; i++) {
      await s.send(readMedia(i, "max.png"));
      expectImage(await s.reply(i));
      // the test keeps no answer it has checked (they are 7 MB each)
      s.replies.splice(0);
    }
    await expectServeMemory(s, idle);
    await s.close();
    expect(treeSnapshot(workdir)).toEqual(before);
  });

  test("5 MiB image reads written at once (ten in the compiled lane): all answered whole, one at a time, peak RSS ≤ 120 MB", async () => {
    const before = treeSnapshot(workdir);
    const { s, idle } = await open();
    await s.send(...Array.from({ length: AT_ONCE }, (_, i) => readMedia(`at-once-${i}`, "max.png")));
    for (let i = 0; i < AT_ONCE; i++) {
      expectImage(await s.reply(`at-once-${i}`));
      s.replies.splice(s.position(`at-once-${i}`), 1);
    }
    await expectServeMemory(s, idle);
    await s.close();
    expect(treeSnapshot(workdir)).toEqual(before);
  });

  test("text with a byte order mark (UTF-8, UTF-16LE/BE, UTF-32LE/BE) is UNSUPPORTED_MEDIA_TYPE, never audio", async () => {
    const before = treeSnapshot(workdir);
    const { s, idle } = await open();
    const names = Object.keys(BOM_TEXTS);
    await s.send(...names.map((name) => readMedia(name, name)));
    for (const name of names) {
      const r = await s.reply(name);
      expect({ name, isError: r.result?.isError, code: r.result?.structuredContent?.code, blocks: r.result?.content?.map((c) => c.type) }).toEqual({
        name,
        isError: true,
        code: "UNSUPPORTED_MEDIA_TYPE",
        blocks: ["text"],
      });
      expect(r.result?.structuredContent?.message).toContain(`w:${name}`);
    }
    await expectServeMemory(s, idle);
    await s.close();
    expect(treeSnapshot(workdir)).toEqual(before);
  });

  test("a small text read, a ping and a tools/list written after a 5 MiB read in one write are answered before it", async () => {
    // The read takes more than one step by construction: that is what lets the others in.
    expect(MAX_MEDIA / YIELD_BYTES).toBeGreaterThanOrEqual(2);
    const before = treeSnapshot(workdir);
    const { s, idle } = await open();
    for (let round = 0; round < 3; round++) {
      await s.send(
        readMedia(`slow-${round}`, "max.png"),
        { jsonrpc: "2.0", id: `small-${round}`, method: "tools/call", params: { name: "read_text_file", arguments: { workdir: "w", path: "small.txt" } } },
        { jsonrpc: "2.0", id: `ping-${round}`, method: "ping" },
        { jsonrpc: "2.0", id: `list-${round}`, method: "tools/list" },
      );
      expectImage(await s.reply(`slow-${round}`));
      expect((await s.reply(`small-${round}`)).result?.structuredContent).toMatchObject({ path: "small.txt", content: "small\n" });
      expect(await s.reply(`ping-${round}`)).toEqual({ jsonrpc: "2.0", id: `ping-${round}`, result: {} } as Reply);
      expect((await s.reply(`list-${round}`)).error).toBeUndefined();
      const slow = s.position(`slow-${round}`);
      expect({ small: s.position(`small-${round}`) < slow, ping: s.position(`ping-${round}`) < slow, list: s.position(`list-${round}`) < slow }).toEqual({ small: true, ping: true, list: true });
      s.replies.splice(0);
    }
    await expectServeMemory(s, idle);
    await s.close();
    expect(treeSnapshot(workdir)).toEqual(before);
  });
});
