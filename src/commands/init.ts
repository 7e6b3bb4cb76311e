// serverfs init [--out FILE]: write a commented, valid starter serverfs.toml.
import { AtomicPublishError, publishFileAtomic } from "../../platform/fs/atomic-file.ts";
import { starterToml } from "../config/starter.ts";
import { ServerfsError } from "../errors.ts";
import { flag, parseArgs, usage } from "./args.ts";
import { INIT } from "./specs.ts";

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, INIT);
  const out = flag(args, "out") ?? "serverfs.toml";
  if (out === "") throw usage("--out needs a file name");
  const text = starterToml(process.cwd());
  try {
    // Create-only, published whole: an existing file, a symlink or a racing writer is never
    // overwritten, and a crash never leaves half a starter file.
    publishFileAtomic(out, text, { mode: 0o644, applyUmask: true, createOnly: true });
  } catch (err) {
    const reason = err instanceof AtomicPublishError ? err.reason : "write_failed";
    if (reason === "target_exists" || reason === "target_symlink" || reason === "target_not_regular") {
      throw new ServerfsError("IO_ERROR", `${out}: already exists; refusing to overwrite it`);
    }
    if (reason === "directory_missing") throw new ServerfsError("IO_ERROR", `${out}: the directory does not exist`);
    if (reason === "write_failed") throw new ServerfsError("IO_ERROR", `${out}: writing failed`);
    throw new ServerfsError("IO_ERROR", `${out}: cannot be created`);
  }
  process.stderr.write(`serverfs: init: wrote ${out}; check it with 'serverfs render-config --config ${out}'\n`);
  return 0;
}
