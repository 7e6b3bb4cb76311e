// The filesystem a path lives on, per OS. Linux reads mountinfo; macOS asks statfs(2); Windows is
// not measured (the file tools do not run there yet), and says so.
import { select } from "../os.ts";
import type { MountFacts } from "./mounts-linux.ts";

export type { MountFacts };

export async function mountOf(realPath: string): Promise<MountFacts | null | "not-measured"> {
  return select<Promise<MountFacts | null | "not-measured">>({
    linux: async () => (await import("./mounts-linux.ts")).linuxMountOf(realPath),
    darwin: async () => (await import("./mounts-darwin.ts")).darwinMountOf(realPath),
    other: async () => "not-measured",
  });
}
