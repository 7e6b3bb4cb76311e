// What the file tools are built from: the file service (src/fs), whose methods take each tool's
// parsed arguments and return exactly its structuredContent. The handlers' return types are
// checked against the tools' zod output schemas at compile time, and at run time by the wrapper.
import type { FileService } from "../../../fs/index.ts";
import type { FsToolLimits } from "./common.ts";

export type FileServiceApi = Omit<FileService, "close">;

export interface FsToolDeps {
  files: FileServiceApi;
  limits: FsToolLimits;
}
