// The private provider environment file: a regular file (not a symlink), owned by us, mode 0600.
// The Bridge refuses to start otherwise. Its contents are secrets: this check never opens it (only
// native-approvals.ts reads its directory variables, and prints none, and acp-provider.ts names
// the keys that look like a model or provider setting, never a value).
import fs from "node:fs";
import { errnoCode } from "../../errors.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, type CheckResult } from "../types.ts";
import { IS_WINDOWS } from "../../../platform/os.ts";

const ID = "state.provider_env_file";
const LABEL = "provider env file";

export function providerEnvFileCheck(ctx: DoctorContext): CheckResult | null {
  const file = ctx.registry.agent.provider_env_file;
  if (file === null) return null;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    const code = errnoCode(err);
    return fail(
      ID,
      LABEL,
      code === "ENOENT" ? `${file} does not exist` : `${file} cannot be inspected (${code ?? "error"})`,
      "create it (one KEY=VALUE per line) with mode 0600, or remove agent.provider_env_file from the config",
    );
  }
  if (st.isSymbolicLink()) return fail(ID, LABEL, `${file} is a symlink`, "replace the link with the file itself (the Bridge opens it without following links)");
  if (!st.isFile()) return fail(ID, LABEL, `${file} is not a regular file`, "point agent.provider_env_file at a regular file");
  if (IS_WINDOWS) return ok(ID, LABEL, `${file} (ACLs not measured on Windows)`);
  if (ctx.uid !== null && st.uid !== ctx.uid) {
    return fail(ID, LABEL, `${file} is owned by uid ${st.uid}, not ${ctx.uid}`, `chown it to the Bridge user; the Bridge refuses a file it does not own`);
  }
  if ((st.mode & 0o077) !== 0) {
    return fail(
      ID,
      LABEL,
      `${file} has mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")} (expected 0600)`,
      `chmod 600 ${file}; its values are credentials, and the Bridge refuses to start with it readable by others`,
    );
  }
  return ok(ID, LABEL, `${file} (mode 0600, owned by this user; contents not read)`);
}
