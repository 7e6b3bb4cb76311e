// Media types from content, never from the name: read_media_file serves a file as an image or
// audio block only when its first bytes are one of these formats, checked strictly (docs/tools.md,
// `read_media_file`): not just a magic number but the structure right behind it, and never for a
// head that is text (./sniff-text.ts). src/fs/mime.ts is the other, extension-based guess that
// stat_file and download_binary_file report; the two never feed each other.
import { isMpegAudio } from "./sniff-mpeg.ts";
import { looksLikeText } from "./sniff-text.ts";

export interface MediaType {
  kind: "image" | "audio";
  mime_type: string;
}

/**
 * Bytes of the file start that sniffMedia looks at: room for three MPEG frames of the longest
 * kind (two whole ones and the third's header), and for a GIF's largest colour table or an Ogg
 * page header with 255 segments and its codec magic.
 */
export const SNIFF_BYTES = 4096; // ≥ 2 × MPEG_MAX_FRAME_BYTES + 4

const ascii = (b: Uint8Array, at: number, s: string): boolean => {
  if (b.length < at + s.length) return false;
  for (let i = 0; i < s.length; i++) if (b[at + i] !== s.charCodeAt(i)) return false;
  return true;
};
const u32le = (b: Uint8Array, at: number): number => b[at]! + b[at + 1]! * 0x100 + b[at + 2]! * 0x10000 + b[at + 3]! * 0x1000000;

const IMAGE = (mime_type: string): MediaType => ({ kind: "image", mime_type });
const AUDIO = (mime_type: string): MediaType => ({ kind: "audio", mime_type });

/**
 * The media type the first bytes of a file announce, or null when they are none of the supported
 * ones. `head` is the file's first SNIFF_BYTES bytes, or all of it when it is shorter; `complete`
 * says it is all of it (a short MPEG stream may then end before three frames).
 */
export function sniffMedia(head: Uint8Array, complete: boolean): MediaType | null {
  if (looksLikeText(head, complete)) return null;
  if (isPng(head)) return IMAGE("image/png");
  if (isJpeg(head)) return IMAGE("image/jpeg");
  if (isGif(head)) return IMAGE("image/gif");
  if (ascii(head, 0, "RIFF") && head.length >= 12) {
    if (isWebp(head)) return IMAGE("image/webp");
    if (isWave(head)) return AUDIO("audio/wav");
    return null;
  }
  if (isId3v2(head) || isMpegAudio(head, complete)) return AUDIO("audio/mpeg");
  if (isOggAudio(head)) return AUDIO("audio/ogg");
  return null;
}

/** The 8-byte signature, then the IHDR chunk every PNG must open with (length 13). */
function isPng(b: Uint8Array): boolean {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13];
  return b.length >= 16 && sig.every((v, i) => b[i] === v) && ascii(b, 12, "IHDR");
}

/** JPEG markers that may stand between SOI and the image data: SOFn, DHT, DAC, DQT, DRI, APPn, COM, and SOS itself. */
function isJpegSegment(m: number): boolean {
  return (m >= 0xc0 && m <= 0xcf && m !== 0xc8) || m === 0xda || m === 0xdb || m === 0xdd || (m >= 0xe0 && m <= 0xef) || m === 0xfe;
}

/** SOI, then a chain of marker segments (marker, 2-byte length ≥ 2) through the head, up to the scan. */
function isJpeg(b: Uint8Array): boolean {
  if (b[0] !== 0xff || b[1] !== 0xd8) return false;
  let at = 2;
  let segments = 0;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return false;
    if (b[at + 1] === 0xff) {
      at++; // a fill byte before a marker
      continue;
    }
    const marker = b[at + 1]!;
    if (!isJpegSegment(marker)) return segments > 0 && marker === 0xd9; // EOI after a segment ends a tiny file
    const length = (b[at + 2]! << 8) | b[at + 3]!;
    if (length < 2) return false;
    segments++;
    if (marker === 0xda) return true;
    at += 2 + length;
  }
  // the head ends inside a segment, or at the next marker's first bytes
  return segments > 0 && (at >= b.length || b[at] === 0xff);
}

/** GIF87a/89a, a non-empty screen, its colour table, then an extension, an image or the trailer. */
function isGif(b: Uint8Array): boolean {
  if (!(ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) || b.length < 14) return false;
  const width = b[6]! | (b[7]! << 8);
  const height = b[8]! | (b[9]! << 8);
  const flags = b[10]!;
  const next = 13 + (flags & 0x80 ? 3 * (2 << (flags & 7)) : 0);
  return width > 0 && height > 0 && next < b.length && (b[next] === 0x21 || b[next] === 0x2c || b[next] === 0x3b);
}

/** RIFF WEBP with a VP8 (key frame start code), VP8L (signature byte) or VP8X (10-byte header) first chunk. */
function isWebp(b: Uint8Array): boolean {
  if (!ascii(b, 8, "WEBP") || b.length < 30) return false;
  if (ascii(b, 12, "VP8 ")) return b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a;
  if (ascii(b, 12, "VP8L")) return b[20] === 0x2f;
  if (ascii(b, 12, "VP8X")) return u32le(b, 16) === 10;
  return false;
}

/** RIFF WAVE whose chunks (printable four-character ids) lead, within the head, to a "fmt " with a format, channels and a rate. */
function isWave(b: Uint8Array): boolean {
  if (!ascii(b, 8, "WAVE")) return false;
  let at = 12;
  while (at + 8 <= b.length) {
    for (let i = 0; i < 4; i++) if (b[at + i]! < 0x20 || b[at + i]! > 0x7e) return false;
    const size = u32le(b, at + 4);
    if (ascii(b, at, "fmt ")) {
      if (size < 14 || at + 16 > b.length) return false;
      const format = b[at + 8]! | (b[at + 9]! << 8);
      const channels = b[at + 10]! | (b[at + 11]! << 8);
      return format !== 0 && channels > 0 && u32le(b, at + 12) > 0;
    }
    at += 8 + size + (size & 1);
  }
  return false;
}

/** An ID3v2 tag in front of MPEG audio: "ID3", major version 2 to 4, no undefined flag, a synchsafe size. */
function isId3v2(b: Uint8Array): boolean {
  if (!ascii(b, 0, "ID3") || b.length < 10) return false;
  const major = b[3]!;
  if (major < 2 || major > 4 || b[4] === 0xff) return false;
  // v2.2 defines 2 flags, v2.3 three, v2.4 four (the high bits); the rest must be clear
  if ((b[5]! & (0xff >> (major === 2 ? 2 : major === 3 ? 3 : 4))) !== 0) return false;
  for (let i = 6; i < 10; i++) if (b[i]! >= 0x80) return false;
  return true;
}

/**
 * An Ogg stream whose first page (version 0, beginning of stream) opens an audio codec (Vorbis,
 * Opus, FLAC, Speex). Ogg also carries video (Theora) and other codecs, so "OggS" alone is not
 * enough to call it audio: the first page's first packet names the codec.
 */
function isOggAudio(b: Uint8Array): boolean {
  if (!ascii(b, 0, "OggS") || b.length < 27 || b[4] !== 0 || (b[5]! & 0x02) === 0) return false;
  const packet = 27 + b[26]!;
  return ascii(b, packet, "\x01vorbis") || ascii(b, packet, "OpusHead") || ascii(b, packet, "\x7fFLAC") || ascii(b, packet, "Speex   ");
}
