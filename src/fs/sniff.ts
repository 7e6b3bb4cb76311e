// Media types from content, never from the name: read_media_file serves a file as an image or
// audio block only when its first bytes are one of these formats' signatures (docs/tools.md,
// `read_media_file`). src/fs/mime.ts is the other, extension-based guess that stat_file and
// download_binary_file report; the two never feed each other.

export interface MediaType {
  kind: "image" | "audio";
  mime_type: string;
}

/** Bytes of the file start that sniffMedia needs at most (an Ogg page header with 255 segments, then a codec magic). */
export const SNIFF_BYTES = 512;

const ascii = (b: Uint8Array, at: number, s: string): boolean => {
  if (b.length < at + s.length) return false;
  for (let i = 0; i < s.length; i++) if (b[at + i] !== s.charCodeAt(i)) return false;
  return true;
};

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The media type the first bytes of a file announce, or null when they are none of the supported ones. */
export function sniffMedia(b: Uint8Array): MediaType | null {
  if (b.length >= 8 && PNG.every((v, i) => b[i] === v)) return { kind: "image", mime_type: "image/png" };
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { kind: "image", mime_type: "image/jpeg" };
  if (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) return { kind: "image", mime_type: "image/gif" };
  if (ascii(b, 0, "RIFF")) {
    if (ascii(b, 8, "WEBP") && (ascii(b, 12, "VP8 ") || ascii(b, 12, "VP8L") || ascii(b, 12, "VP8X"))) return { kind: "image", mime_type: "image/webp" };
    if (ascii(b, 8, "WAVE")) return { kind: "audio", mime_type: "audio/wav" };
    return null;
  }
  if (isId3(b) || isMpegFrame(b)) return { kind: "audio", mime_type: "audio/mpeg" };
  if (isOggAudio(b)) return { kind: "audio", mime_type: "audio/ogg" };
  return null;
}

/** An ID3v2 tag in front of MPEG audio: "ID3", major version 2 to 4, then a 4-byte synchsafe size. */
function isId3(b: Uint8Array): boolean {
  if (!ascii(b, 0, "ID3") || b.length < 10) return false;
  const major = b[3]!;
  if (major < 2 || major > 4 || b[4] === 0xff) return false;
  for (let i = 6; i < 10; i++) if (b[i]! >= 0x80) return false;
  return true;
}

/**
 * A bare MPEG audio frame header (MP3 without a tag): 11 sync bits, and no reserved value in the
 * version, layer, bitrate, sample rate or emphasis fields. The layer check also keeps out AAC
 * ADTS streams, whose layer field is 0.
 */
function isMpegFrame(b: Uint8Array): boolean {
  if (b.length < 4 || b[0] !== 0xff || (b[1]! & 0xe0) !== 0xe0) return false;
  const version = (b[1]! >> 3) & 3;
  const layer = (b[1]! >> 1) & 3;
  const bitrate = b[2]! >> 4;
  const rate = (b[2]! >> 2) & 3;
  const emphasis = b[3]! & 3;
  return version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3 && emphasis !== 2;
}

/**
 * An Ogg stream whose first packet opens an audio codec (Vorbis, Opus, FLAC, Speex). Ogg also
 * carries video (Theora) and other codecs, so "OggS" alone is not enough to call it audio: the
 * first page's first packet names the codec.
 */
function isOggAudio(b: Uint8Array): boolean {
  if (!ascii(b, 0, "OggS") || b.length < 27 || b[4] !== 0) return false;
  const packet = 27 + b[26]!;
  return ascii(b, packet, "\x01vorbis") || ascii(b, packet, "OpusHead") || ascii(b, packet, "\x7fFLAC") || ascii(b, packet, "Speex   ");
}
