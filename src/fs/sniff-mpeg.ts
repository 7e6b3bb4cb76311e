// MPEG audio (MP3 and its Layer I/II siblings) without an ID3 tag has no magic number: a stream is
// a run of frames, each opening with 11 sync bits and a header whose fields give the frame's
// length. Two bytes of sync are easy to meet by chance (a UTF-16LE byte order mark is FF FE), so
// a stream is recognised only by walking it: consecutive valid headers, each where the frame
// before it ends, with the same version, layer and sample rate.

/** Frames the walk must find in a head that does not reach the end of the file. */
export const MPEG_FRAMES_NEEDED = 3;
/** The longest frame (MPEG-1 Layer II, 384 kbit/s at 32 kHz, padded): the head must hold two of them and a header. */
export const MPEG_MAX_FRAME_BYTES = 1729;

// kbit/s by bitrate index 1-14 (0 is "free format", whose length the header does not give; 15 is invalid).
const V1_L1 = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448];
const V1_L2 = [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384];
const V1_L3 = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const V2_L1 = [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256];
const V2_L23 = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
// Hz by sample-rate index 0-2 (3 is reserved), for version bits 11 (MPEG-1), 10 (MPEG-2), 00 (MPEG-2.5).
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

interface FrameHeader {
  /** The version, layer and sample-rate bits, which stay the same through a stream. */
  stream: number;
  length: number;
}

/** The frame header at `at`, or null when any field is reserved, free-format or invalid. */
function frameAt(b: Uint8Array, at: number): FrameHeader | null {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return null;
  const version = (b[at + 1]! >> 3) & 3; // 01 is reserved
  const layer = (b[at + 1]! >> 1) & 3; // 00 is reserved (and is what AAC ADTS has)
  const bitrateIndex = b[at + 2]! >> 4;
  const rateIndex = (b[at + 2]! >> 2) & 3;
  const padding = (b[at + 2]! >> 1) & 1;
  const emphasis = b[at + 3]! & 3; // 10 is reserved
  if (version === 1 || layer === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3 || emphasis === 2) return null;
  const v1 = version === 3;
  const table = layer === 3 ? (v1 ? V1_L1 : V2_L1) : layer === 2 ? (v1 ? V1_L2 : V2_L23) : v1 ? V1_L3 : V2_L23;
  const bitrate = table[bitrateIndex - 1]! * 1000;
  const rate = RATES[version]![rateIndex]!;
  // Layer I frames are 384 samples in 4-byte slots; Layer II 1152; Layer III 1152 (MPEG-1) or 576.
  const length = layer === 3 ? (Math.floor((12 * bitrate) / rate) + padding) * 4 : Math.floor(((layer === 1 && !v1 ? 72 : 144) * bitrate) / rate) + padding;
  return { stream: (b[at + 1]! & 0x1e) | (rateIndex << 5), length };
}

/** An ID3v1 tag: the 128 bytes "TAG…" some encoders put after the last frame. */
const isId3v1At = (b: Uint8Array, at: number): boolean => b.length - at === 128 && b[at] === 0x54 && b[at + 1] === 0x41 && b[at + 2] === 0x47;

/**
 * Whether `b` opens an MPEG audio stream: MPEG_FRAMES_NEEDED consecutive frames, or, when `b` is
 * the whole file (`complete`), frames that end exactly at its end (or at an ID3v1 tag that does).
 */
export function isMpegAudio(b: Uint8Array, complete: boolean): boolean {
  const first = frameAt(b, 0);
  if (first === null) return false;
  let at = 0;
  for (let frames = 0; ; frames++) {
    if (frames === MPEG_FRAMES_NEEDED) return true;
    if (complete && frames > 0 && (at === b.length || isId3v1At(b, at))) return true;
    const frame = frameAt(b, at);
    if (frame === null || frame.stream !== first.stream) return false;
    at += frame.length;
  }
}
