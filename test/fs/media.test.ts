// read_media_file in the file layer: the type comes from the bytes, never the name; every
// supported format is recognised from a minimal real file; near misses, text and unknown binary
// are UNSUPPORTED_MEDIA_TYPE; the size cap is exact; the bytes returned are the bytes on disk.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { downloadReadHooks } from "../../src/fs/binary.ts";
import { sniffMedia } from "../../src/fs/sniff.ts";
import { MEDIA_SAMPLES, mp3Frame, oggPage, oggTheora, png, wav } from "../support/media.ts";
import { expectCode, single, write } from "./helpers.ts";

describe("read_media_file", () => {
  test("each supported format is recognised from its bytes, under a name that says nothing", async () => {
    const { svc, root } = single();
    for (const s of MEDIA_SAMPLES) {
      write(root, `samples/${s.name}.bin`, s.bytes());
      const { meta, bytes } = await svc.readMediaFile({ workdir: "w", path: `samples/${s.name}.bin` });
      expect({ name: s.name, kind: meta.kind, mime: meta.mime_type }).toEqual({ name: s.name, kind: s.kind, mime: s.mime });
      expect(Buffer.compare(bytes, fs.readFileSync(path.join(root, `samples/${s.name}.bin`)))).toBe(0);
      expect(meta.size).toBe(s.bytes().length);
      expect(meta.revision).toBe((await svc.statFile({ workdir: "w", path: `samples/${s.name}.bin` })).revision);
    }
  });

  test("the real samples (test/fixtures/media) are served whole with their type; the same text with each BOM is UNSUPPORTED_MEDIA_TYPE", async () => {
    const { svc, root } = single({ binary_transfer_enabled: false });
    const fixtures = path.join(import.meta.dir, "../fixtures/media");
    const expected: Record<string, string> = {
      "image.png": "image/png", "image.jpg": "image/jpeg", "image.gif": "image/gif", "image-lossy.webp": "image/webp", "image-lossless.webp": "image/webp",
      "audio.wav": "audio/wav", "audio.mp3": "audio/mpeg", "audio-long.mp3": "audio/mpeg", "audio-id3.mp3": "audio/mpeg", "audio-mpeg1.mp3": "audio/mpeg",
      "audio-vorbis.ogg": "audio/ogg", "audio-opus.ogg": "audio/ogg",
    };
    for (const [name, mime] of Object.entries(expected)) {
      const bytes = fs.readFileSync(path.join(fixtures, name));
      write(root, `real/${name}.bin`, bytes);
      const got = await svc.readMediaFile({ workdir: "w", path: `real/${name}.bin` });
      expect({ name, mime: got.meta.mime_type, same: Buffer.compare(got.bytes, bytes) === 0 }).toEqual({ name, mime, same: true });
    }
    const text = "a line of text\n".repeat(20);
    const boms: Record<string, Buffer> = {
      "utf-8": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
      "utf-16le": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]),
      "utf-16be": Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(Buffer.from(text, "utf16le")).swap16()]),
      "utf-32le": Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), ...[...text].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0]))]),
      "utf-32be": Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), ...[...text].map((c) => Buffer.from([0, 0, 0, c.charCodeAt(0)]))]),
    };
    for (const [name, bytes] of Object.entries(boms)) {
      write(root, `${name}.mp3`, bytes);
      await expectCode(svc.readMediaFile({ workdir: "w", path: `${name}.mp3` }), "UNSUPPORTED_MEDIA_TYPE");
    }
  });

  test("a PNG named .txt is image/png; text named .png and a zero-byte .png are refused", async () => {
    const { svc, root } = single();
    write(root, "picture.txt", png());
    write(root, "fake.png", "this is plain text, not a picture\n");
    write(root, "empty.png", "");
    expect((await svc.readMediaFile({ workdir: "w", path: "picture.txt" })).meta.mime_type).toBe("image/png");
    await expectCode(svc.readMediaFile({ workdir: "w", path: "fake.png" }), "UNSUPPORTED_MEDIA_TYPE");
    await expectCode(svc.readMediaFile({ workdir: "w", path: "empty.png" }), "UNSUPPORTED_MEDIA_TYPE");
    // the extension guess stat_file reports is unchanged by the sniffing
    expect((await svc.statFile({ workdir: "w", path: "picture.txt" })).mime_type).toBe("text/plain");
  });

  test("near misses are not media: truncated signatures, other RIFF forms, AAC ADTS, Ogg video, PDF, ELF", () => {
    const misses: Record<string, Buffer> = {
      "png-7-bytes": png().subarray(0, 7),
      "jpeg-2-bytes": Buffer.from([0xff, 0xd8]),
      gif88: Buffer.from("GIF88a\x01\x00", "latin1"),
      avi: Buffer.concat([Buffer.from("RIFF\x10\x00\x00\x00AVI LIST", "latin1"), Buffer.alloc(8)]),
      "webp-without-chunk": Buffer.from("RIFF\x04\x00\x00\x00WEBP", "latin1"),
      "aac-adts": Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]),
      "mpeg-reserved-version": Buffer.from([0xff, 0xeb, 0x90, 0x64]),
      "mpeg-bad-bitrate": Buffer.from([0xff, 0xfb, 0xf0, 0x64]),
      "id3-bad-size": Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0x80, 0, 0, 0]),
      "ogg-theora": oggTheora(),
      "ogg-unknown-codec": oggPage(Buffer.from("\x01unknown", "latin1")),
      pdf: Buffer.from("%PDF-1.7\n", "latin1"),
      elf: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]),
      text: Buffer.from("hello\n"),
      // Latin-1 text that opens with JPEG's bytes, and printable segment lengths
      "latin-1-jpeg-text": Buffer.from("ÿØÿàAB some words in Latin-1, all printable\n", "latin1"),
      // one valid MPEG header (MPEG-1 Layer III) on bytes that hold no second frame
      "mpeg-one-header": Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(500, 0x11)]),
      // a whole file that ends inside its second frame
      "mpeg-cut": Buffer.concat([mp3Frame(), mp3Frame().subarray(0, 100)]),
      "utf-16le-bom-binary": Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x02, 0x03]),
    };
    for (const [name, bytes] of Object.entries(misses)) expect({ name, type: sniffMedia(bytes, true) }).toEqual({ name, type: null });
    // and the positive controls the misses were cut from
    expect(sniffMedia(mp3Frame(), true)?.mime_type).toBe("audio/mpeg");
    expect(sniffMedia(wav(), true)?.mime_type).toBe("audio/wav");
  });

  test("size cap: exactly max_media_bytes is served, one byte more is MEDIA_FILE_TOO_LARGE; non-media is refused first", async () => {
    const img = png();
    const { svc, root } = single({}, { max_media_bytes: img.length + 10 });
    write(root, "fits.png", Buffer.concat([img, Buffer.alloc(10)]));
    write(root, "over.png", Buffer.concat([img, Buffer.alloc(11)]));
    write(root, "big.txt", "x".repeat(img.length + 100));
    const fits = await svc.readMediaFile({ workdir: "w", path: "fits.png" });
    expect(fits.meta.size).toBe(img.length + 10);
    await expectCode(svc.readMediaFile({ workdir: "w", path: "over.png" }), "MEDIA_FILE_TOO_LARGE");
    await expectCode(svc.readMediaFile({ workdir: "w", path: "big.txt" }), "UNSUPPORTED_MEDIA_TYPE");
  });

  test("needs no binary_transfer; directories, FIFOs and hard-linked files follow the read rules", async () => {
    const { svc, root } = single({ binary_transfer_enabled: false, refuse_hardlinked_reads: true });
    write(root, "a.png", png());
    fs.mkdirSync(path.join(root, "dir.png"));
    expect((await svc.readMediaFile({ workdir: "w", path: "a.png" })).meta.mime_type).toBe("image/png");
    await expectCode(svc.readMediaFile({ workdir: "w", path: "dir.png" }), "NOT_A_FILE");
    await expectCode(svc.readMediaFile({ workdir: "w", path: "a.png/" }), "INVALID_PATH");
    await expectCode(svc.readMediaFile({ workdir: "w", path: "none.png" }), "PATH_NOT_FOUND");
    fs.linkSync(path.join(root, "a.png"), path.join(root, "b.png"));
    await expectCode(svc.readMediaFile({ workdir: "w", path: "a.png" }), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
    if (process.platform !== "win32") {
      Bun.spawnSync(["mkfifo", path.join(root, "pipe.png")]);
      await expectCode(svc.readMediaFile({ workdir: "w", path: "pipe.png" }), "UNSUPPORTED_FILE_TYPE");
    }
  });

  describe("while the file changes", () => {
    afterEach(() => {
      downloadReadHooks.afterChunk = null;
    });

    test("an image rewritten or grown during the read is FILE_CHANGED_DURING_READ, never a mix of versions", async () => {
      const { svc, root } = single();
      const p = path.join(root, "big.png");
      const img = Buffer.concat([png(), Buffer.alloc(200_000, 7)]); // several 64 KiB chunks
      fs.writeFileSync(p, img);
      downloadReadHooks.afterChunk = () => {
        downloadReadHooks.afterChunk = null;
        fs.appendFileSync(p, "more");
      };
      await expectCode(svc.readMediaFile({ workdir: "w", path: "big.png" }), "FILE_CHANGED_DURING_READ");
      fs.writeFileSync(p, img);
      downloadReadHooks.afterChunk = () => {
        downloadReadHooks.afterChunk = null;
        const fd = fs.openSync(p, "r+");
        fs.writeSync(fd, Buffer.from("text now"), 0, 8, 0);
        fs.closeSync(fd);
      };
      await expectCode(svc.readMediaFile({ workdir: "w", path: "big.png" }), "FILE_CHANGED_DURING_READ");
    });
  });
});
