// The media sniffer as a property: random text, in every common encoding, with and without a byte
// order mark, cut or whole, is never media; the real samples in test/fixtures/media (made by real
// encoders, see its README) always are, with their exact type. The text comes from a seeded PRNG,
// so every run sees the same thousands of texts: the test cannot flake, and a failure names the
// case that reproduces it. The texts lean on the characters whose encodings open like a media
// signature (ÿØÿ is JPEG's SOI in Latin-1, ￥ is FF E5 in UTF-16BE, an MPEG frame sync).
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { SNIFF_BYTES, sniffMedia } from "../../src/fs/sniff.ts";
import { mulberry32 } from "../support/prng.ts";

const FIXTURES = path.join(import.meta.dir, "../fixtures/media");

/** Every fixture with the type read_media_file must report for it. */
const SAMPLES: { file: string; kind: "image" | "audio"; mime: string }[] = [
  { file: "image.png", kind: "image", mime: "image/png" },
  { file: "image.jpg", kind: "image", mime: "image/jpeg" },
  { file: "image.gif", kind: "image", mime: "image/gif" },
  { file: "image-lossy.webp", kind: "image", mime: "image/webp" },
  { file: "image-lossless.webp", kind: "image", mime: "image/webp" },
  { file: "audio.wav", kind: "audio", mime: "audio/wav" },
  { file: "audio.mp3", kind: "audio", mime: "audio/mpeg" },
  { file: "audio-long.mp3", kind: "audio", mime: "audio/mpeg" },
  { file: "audio-id3.mp3", kind: "audio", mime: "audio/mpeg" },
  { file: "audio-mpeg1.mp3", kind: "audio", mime: "audio/mpeg" },
  { file: "audio-vorbis.ogg", kind: "audio", mime: "audio/ogg" },
  { file: "audio-opus.ogg", kind: "audio", mime: "audio/ogg" },
];

/** The verdict read_media_file reaches on a file with these bytes (its head, and whether that is all of it). */
const sniffFile = (bytes: Uint8Array) => sniffMedia(bytes.subarray(0, SNIFF_BYTES), bytes.length < SNIFF_BYTES);


type Range = [number, number];
// Scripts and symbols text is written in, the whole BMP range of fullwidth forms and the astral
// emoji (surrogate pairs in UTF-16) included.
const UNICODE: Range[] = [
  [0x20, 0x7e], [0x20, 0x7e], [0x20, 0x7e], [0xa0, 0xff], [0x100, 0x24f], [0x370, 0x3ff], [0x400, 0x4ff], [0x5d0, 0x5ea],
  [0x620, 0x64a], [0x900, 0x97f], [0x2000, 0x206f], [0x20a0, 0x20bf], [0x2190, 0x22ff], [0x3040, 0x30ff], [0x4e00, 0x9fff],
  [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xff01, 0xffee], [0x1f300, 0x1f64f], [0x1f900, 0x1f9ff], [0x20000, 0x2a6df],
];
// Latin-1's printable characters (the only ones a Latin-1 file can hold).
const LATIN1: Range[] = [[0x20, 0x7e], [0x20, 0x7e], [0xa0, 0xff]];
const WHITESPACE = ["\n", "\r\n", "\t", " "];
// Openings whose encodings look like a signature in one encoding or another.
const OPENINGS = ["ÿØÿà", "ÿû", "ÿó", "ÿã", "ÿþ", "ID3", "GIF89a", "GIF87a", "RIFF", "OggS", "‰PNG", "￥", "￦", "￣", "ÿ", "\u{1f600}", "凰", "\ufeff"];

function randomText(next: () => number, ranges: Range[], length: number): string {
  let s = next() < 0.4 ? OPENINGS[Math.floor(next() * OPENINGS.length)]! : "";
  if (ranges === LATIN1) s = [...s].filter((c) => c.codePointAt(0)! <= 0xff && c.codePointAt(0)! >= 0x20).join("");
  while (s.length < length) {
    if (next() < 0.08) {
      s += WHITESPACE[Math.floor(next() * WHITESPACE.length)];
      continue;
    }
    const [lo, hi] = ranges[Math.floor(next() * ranges.length)]!;
    s += String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)));
  }
  return s;
}

function utf16(s: string, little: boolean): Buffer {
  const le = Buffer.from(s, "utf16le");
  return little ? le : Buffer.from(le).swap16();
}

function utf32(s: string, little: boolean): Buffer {
  const cps = [...s].map((c) => c.codePointAt(0)!);
  const out = Buffer.alloc(cps.length * 4);
  cps.forEach((cp, i) => (little ? out.writeUInt32LE(cp, i * 4) : out.writeUInt32BE(cp, i * 4)));
  return out;
}

const ENCODINGS: { name: string; latin1?: true; bom: number[]; encode: (s: string) => Buffer }[] = [
  { name: "utf-8", bom: [0xef, 0xbb, 0xbf], encode: (s) => Buffer.from(s, "utf8") },
  { name: "utf-16le", bom: [0xff, 0xfe], encode: (s) => utf16(s, true) },
  { name: "utf-16be", bom: [0xfe, 0xff], encode: (s) => utf16(s, false) },
  { name: "utf-32le", bom: [0xff, 0xfe, 0, 0], encode: (s) => utf32(s, true) },
  { name: "utf-32be", bom: [0, 0, 0xfe, 0xff], encode: (s) => utf32(s, false) },
  { name: "latin-1", latin1: true, bom: [], encode: (s) => Buffer.from(s, "latin1") },
];

describe("the media sniffer, as a property", () => {
  test("random text in UTF-8, UTF-16LE/BE, UTF-32LE/BE and Latin-1, with and without a BOM, short or longer than the sniffed head, is never media", () => {
    const SEED = 0x5eed_4d45;
    const next = mulberry32(SEED);
    const media: string[] = [];
    let cases = 0;
    for (let round = 0; round < 600; round++) {
      // lengths in characters: tiny, around a few frames, and past SNIFF_BYTES in every encoding
      const length = [1, 2, 3, 5, 8, 40, 300, 1500, 5000][Math.floor(next() * 9)]!;
      for (const enc of ENCODINGS) {
        const text = randomText(next, enc.latin1 ? LATIN1 : UNICODE, length);
        const body = enc.encode(text);
        for (const bom of enc.bom.length > 0 ? [false, true] : [false]) {
          const bytes = bom ? Buffer.concat([Buffer.from(enc.bom), body]) : body;
          cases++;
          const type = sniffFile(bytes);
          if (type !== null) media.push(`round ${round} ${enc.name}${bom ? "+bom" : ""} ${bytes.subarray(0, 12).toString("hex")} -> ${type.mime_type}`);
        }
      }
    }
    expect(cases).toBe(600 * 11);
    expect(media).toEqual([]);
  });

  test("every real sample is media of its exact type, whole, and with more bytes after the sniffed head", () => {
    for (const s of SAMPLES) {
      const bytes = fs.readFileSync(path.join(FIXTURES, s.file));
      expect({ file: s.file, type: sniffFile(bytes) }).toEqual({ file: s.file, type: { kind: s.kind, mime_type: s.mime } });
      // a longer file of the same start: only its first SNIFF_BYTES are looked at, and it is not "complete"
      const longer = Buffer.concat([bytes, Buffer.alloc(SNIFF_BYTES, 0x55)]);
      expect({ file: s.file, longer: sniffFile(longer)?.mime_type }).toEqual({ file: s.file, longer: s.mime });
    }
  });

  test("a sample whose first bytes are replaced by a byte order mark is never media", () => {
    for (const s of SAMPLES) {
      const bytes = fs.readFileSync(path.join(FIXTURES, s.file));
      for (const bom of ENCODINGS.map((e) => e.bom).filter((b) => b.length > 0)) {
        const marked = Buffer.from(bytes);
        marked.set(bom, 0);
        expect({ file: s.file, bom, type: sniffFile(marked) }).toEqual({ file: s.file, bom, type: null });
      }
    }
  });

  test("an MPEG stream needs its frames: one valid header on garbage, or a chain cut short, is not audio", () => {
    const mp3 = fs.readFileSync(path.join(FIXTURES, "audio-long.mp3"));
    expect(sniffFile(mp3)?.mime_type).toBe("audio/mpeg");
    // the first frame's header, then bytes that are no second frame (the PRNG again: the same every run)
    const next = mulberry32(7);
    for (let i = 0; i < 200; i++) {
      const noise = Buffer.from(Array.from({ length: SNIFF_BYTES }, () => Math.floor(next() * 256)));
      noise.set(mp3.subarray(0, 4), 0);
      expect({ i, type: sniffFile(noise) }).toEqual({ i, type: null });
    }
    // a whole short file that ends inside its second frame
    const firstLength = 288; // MPEG-2.5 Layer III, 32 kbit/s, 8 kHz, no padding: 72 × 32000 / 8000
    expect(sniffFile(mp3.subarray(0, firstLength + 100))).toBeNull();
    // ...while one that ends exactly after whole frames is audio
    expect(sniffFile(mp3.subarray(0, 2 * firstLength))?.mime_type).toBe("audio/mpeg");
  });
});
