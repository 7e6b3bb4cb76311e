import { z } from "zod";
import { LargeAnswerGate } from "../../large-answers.ts";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { resourceUri } from "../../uri.ts";
import { revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const downloadBinaryFileInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
});

export const downloadBinaryFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  size: z.number().int(),
  mime_type: z.string(),
  sha256: z.string(),
  revision: revisionOut,
});

export function downloadBinaryFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "download_binary_file",
    title: "Download binary file",
    description:
      "Return the exact bytes of one regular file (any content) as an embedded base64 resource, with " +
      "size, MIME type, SHA-256 and revision. Only in workdirs with binary transfer enabled; files above " +
      "the workdir's binary limit give BINARY_FILE_TOO_LARGE. Use read_text_file for text.",
    hints: HINTS.read,
    input: downloadBinaryFileInput,
    output: downloadBinaryFileOutput,
    // One at a time, each once the previous answer is written: every one holds the whole file.
    handler: (args, { signal, extra }) => (extra.largeAnswers ?? ungated).run(extra.requestId, signal, async () => {
      const { meta, bytes } = await deps.files.downloadBinaryFile(args);
      return {
        structured: meta,
        content: [
          {
            type: "resource",
            resource: {
              uri: resourceUri(meta.workdir, meta.path),
              mimeType: meta.mime_type,
              blob: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
            },
          },
        ],
      };
    }),
  });
}

/** Outside a server (no gate of its own): one call at a time, each let go when it returns. */
const ungated = new LargeAnswerGate();
