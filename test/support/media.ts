// Minimal media files for read_media_file tests, built byte by byte from each format's published
// layout (a decodable PNG with real CRCs and zlib data, RIFF headers, an ID3v2 tag, MPEG frame
// headers, an Ogg page with its CRC). No bun:test import: the Windows lane's tests use it too.
import zlib from "node:zlib";

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A decodable 1×1 RGB PNG (one red pixel). */
export function png(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const raw = Buffer.from([0, 255, 0, 0]); // filter byte, then R G B
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", zlib.deflateSync(raw)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** SOI, a JFIF APP0 segment, EOI: the bytes every JPEG opens with. */
export function jpeg(): Buffer {
  return Buffer.concat([
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
    Buffer.from("JFIF\0", "latin1"),
    Buffer.from([1, 1, 0, 0, 1, 0, 1, 0, 0]),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** The classic 1×1 transparent GIF89a (43 bytes). */
export function gif(): Buffer {
  return Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
}

function riff(form: string, chunks: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.write("RIFF", 0, "latin1");
  head.writeUInt32LE(4 + chunks.length, 4);
  head.write(form, 8, "latin1");
  return Buffer.concat([head, chunks]);
}

function riffChunk(id: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, "latin1");
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

/** A RIFF/WEBP container with a lossless (VP8L) image chunk. */
export function webp(): Buffer {
  return riff("WEBP", riffChunk("VP8L", Buffer.from([0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00])));
}

/** PCM WAV: fmt chunk (mono, 8 kHz, 16-bit) and 4 samples of silence. */
export function wav(): Buffer {
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // channels
  fmt.writeUInt32LE(8000, 4);
  fmt.writeUInt32LE(16000, 8); // byte rate
  fmt.writeUInt16LE(2, 12); // block align
  fmt.writeUInt16LE(16, 14);
  return riff("WAVE", Buffer.concat([riffChunk("fmt ", fmt), riffChunk("data", Buffer.alloc(8))]));
}

/** One MPEG-1 Layer III frame: 128 kbit/s, 44.1 kHz, no padding → 417 bytes. */
export function mp3Frame(): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return frame;
}

/** An ID3v2.4 tag (one TIT2 frame) in front of an MPEG frame. */
export function mp3Id3(): Buffer {
  const text = Buffer.concat([Buffer.from([3]), Buffer.from("t", "latin1")]);
  const frameHead = Buffer.alloc(10);
  frameHead.write("TIT2", 0, "latin1");
  frameHead[7] = text.length; // synchsafe size, < 128
  const body = Buffer.concat([frameHead, text]);
  const tag = Buffer.concat([Buffer.from("ID3", "latin1"), Buffer.from([4, 0, 0, 0, 0, 0, body.length])]);
  return Buffer.concat([tag, body, mp3Frame()]);
}

/** A first Ogg page (beginning of stream) whose one packet starts with `packet`. */
export function oggPage(packet: Buffer): Buffer {
  const head = Buffer.alloc(27);
  head.write("OggS", 0, "latin1");
  head[4] = 0; // version
  head[5] = 0x02; // beginning of stream
  head.writeUInt32LE(0x1234, 14); // serial
  head[26] = 1; // one segment
  const page = Buffer.concat([head, Buffer.from([packet.length]), packet]);
  // The Ogg CRC (poly 0x04c11db7, not reflected) over the page with its CRC field zero.
  let crc = 0;
  for (const byte of page) {
    crc ^= byte << 24;
    for (let k = 0; k < 8; k++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  page.writeUInt32LE(crc >>> 0, 22);
  return page;
}

/** Ogg Vorbis: the identification header packet (version 0, mono, 44.1 kHz). */
export function oggVorbis(): Buffer {
  const id = Buffer.alloc(30);
  id[0] = 1;
  id.write("vorbis", 1, "latin1");
  id[11] = 1; // channels
  id.writeUInt32LE(44100, 12);
  id[28] = 0xb8; // block sizes
  id[29] = 1; // framing bit
  return oggPage(id);
}

/** Ogg Theora (video): an Ogg stream that is not audio. */
export function oggTheora(): Buffer {
  const id = Buffer.alloc(42);
  id[0] = 0x80;
  id.write("theora", 1, "latin1");
  return oggPage(id);
}

/** Every supported format with the type read_media_file must report for it. */
export const MEDIA_SAMPLES: { name: string; bytes: () => Buffer; kind: "image" | "audio"; mime: string }[] = [
  { name: "png", bytes: png, kind: "image", mime: "image/png" },
  { name: "jpeg", bytes: jpeg, kind: "image", mime: "image/jpeg" },
  { name: "gif", bytes: gif, kind: "image", mime: "image/gif" },
  { name: "webp", bytes: webp, kind: "image", mime: "image/webp" },
  { name: "wav", bytes: wav, kind: "audio", mime: "audio/wav" },
  { name: "mp3-id3", bytes: mp3Id3, kind: "audio", mime: "audio/mpeg" },
  { name: "mp3-frame", bytes: mp3Frame, kind: "audio", mime: "audio/mpeg" },
  { name: "ogg-vorbis", bytes: oggVorbis, kind: "audio", mime: "audio/ogg" },
];
