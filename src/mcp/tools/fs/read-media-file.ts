import { z } from "zod";
import { LargeAnswerGate } from "../../large-answers.ts";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const readMediaFileInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
});

export const readMediaFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  kind: z.enum(["image", "audio"]),
  mime_type: z.string().describe("Sniffed from the content, never from the file name."),
  size: z.number().int(),
  revision: revisionOut,
});

export function readMediaFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "read_media_file",
    title: "Read media file",
    description:
      "Return an image (PNG, JPEG, GIF, WebP) or audio file (WAV, MP3, Ogg Vorbis/Opus/FLAC/Speex) as an MCP " +
      "image or audio content block (base64 data and mimeType). The type is recognised from the file's bytes, " +
      "not its name, and strictly; anything else, text included (any byte order mark, whatever follows), is " +
      "UNSUPPORTED_MEDIA_TYPE, and files over the media size limit are " +
      "MEDIA_FILE_TOO_LARGE. Use read_text_file for text.",
    hints: HINTS.read,
    input: readMediaFileInput,
    output: readMediaFileOutput,
    // One at a time, each once the previous answer is written: every one holds the whole file.
    handler: (args, { signal, extra }) =>
      (extra.largeAnswers ?? ungated).run(extra.requestId, signal, async () => {
        const { meta, bytes } = await deps.files.readMediaFile(args);
        return {
          structured: meta,
          content: [{ type: meta.kind, data: bytes.toString("base64"), mimeType: meta.mime_type }],
        };
      }),
  });
}

/** Outside a server (no gate of its own): one call at a time, each let go when it returns. */
const ungated = new LargeAnswerGate();
