// serverfs init [--out FILE]: write a commented, valid starter serverfs.toml. The file is
// created exclusively (O_EXCL), so an existing file, symlink or a racing writer is never
// overwritten.
import * as fs from "node:fs";
import { starterToml } from "../config/starter.ts";
import { errnoCode, ServerfsError } from "../errors.ts";
import { flag, parseArgs, usage } from "./args.ts";

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { out: { value: true } });
  if (args.positionals.length > 0) throw usage(`unexpected argument '${args.positionals[0]}'`);
  const out = flag(args, "out") ?? "serverfs.toml";
  if (out === "") throw usage("--out needs a file name");
  const text = starterToml(process.cwd());
  let fd: number;
  try {
    fd = fs.openSync(out, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o644);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") throw new ServerfsError("IO_ERROR", `${out}: already exists; refusing to overwrite it`);
    if (code === "ENOENT" || code === "ENOTDIR") throw new ServerfsError("IO_ERROR", `${out}: the directory does not exist`);
    throw new ServerfsError("IO_ERROR", `${out}: cannot be created`);
  }
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } catch {
    fs.closeSync(fd);
    fs.unlinkSync(out);
    throw new ServerfsError("IO_ERROR", `${out}: writing failed`);
  }
  fs.closeSync(fd);
  process.stderr.write(`serverfs: init: wrote ${out}; check it with 'serverfs render-config --config ${out}'\n`);
  return 0;
}
