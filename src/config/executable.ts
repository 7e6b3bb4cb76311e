// Whether a configured ACP command names an existing regular executable file. Symlinks are
// followed (packaged agents are often linked into a bin directory); the target must still be a
// regular file. Reasons do not repeat the path.
import * as fs from "node:fs";
import { PLATFORM_NAME } from "../../platform/os.ts";

export function executableProblem(command: string, platform: NodeJS.Platform = PLATFORM_NAME): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(command);
  } catch {
    return "no file exists at this path";
  }
  if (st.isDirectory()) return "is a directory, not an executable file";
  if (!st.isFile()) return "is not a regular file";
  if (platform === "win32") return null; // Windows has no execute bit; CreateProcess decides.
  try {
    fs.accessSync(command, fs.constants.X_OK);
  } catch {
    return "is not executable by this user";
  }
  return null;
}
