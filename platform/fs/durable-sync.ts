// The one durable sync of serverfs's own files (atomic publish: guards, journal, rendered config,
// service files). On macOS it is F_FULLFSYNC through the first fixed-argument route libSystem
// offers (fullsync-darwin.ts); elsewhere fsync(2), which on Linux and Windows already reaches
// stable storage.
import fs from "node:fs";
import { IS_DARWIN } from "../os.ts";
import { fullFsync } from "./fullsync-darwin.ts";

export function durableSync(fd: number): void {
  if (IS_DARWIN) fullFsync(fd);
  else fs.fsyncSync(fd);
}
