// Per workdir: the root (exists, a directory, not a symlink or reparse point), the filesystem it
// lives on, how its names are matched (the same probe serve runs), one real policy-filtered listing through the same FileService `serve` uses, and for
// read-write workdirs a write-capability probe that creates nothing (access(2) W_OK|X_OK, plus
// the read-only flag of the mount).
import fs from "node:fs";
import type { Workdir } from "../../config/types.ts";
import { errnoCode, ServerfsError } from "../../errors.ts";
import type { FileService } from "../../fs/index.ts";
import { workdirPolicy } from "../../fs/workdir-policy.ts";
import { fsTypeConcern, mountOf, type MountFacts } from "../fstype.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";
import { IS_WINDOWS, PLATFORM_NAME } from "../../../platform/os.ts";

function keyOf(index: number): string {
  return `workdirs[${index}].path`;
}

/** Root facts; returns null when the later checks cannot run. */
export function rootCheck(w: Workdir, index: number): { result: CheckResult; usable: boolean } {
  const id = `workdir.${w.alias}.root`;
  const label = `workdir ${w.alias} root`;
  const access = w.read_only ? "read-only" : "read-write";
  let st: fs.Stats;
  try {
    st = fs.lstatSync(w.path);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") {
      return { usable: false, result: fail(id, label, `${w.path} does not exist`, `create the directory, or correct ${keyOf(index)} in the config`) };
    }
    return {
      usable: false,
      result: fail(id, label, `${w.path} cannot be inspected (${code ?? "error"})`, "give this user search permission on every parent directory"),
    };
  }
  if (st.isSymbolicLink()) {
    const what = IS_WINDOWS ? "a symlink or junction (reparse point)" : "a symlink";
    return {
      usable: false,
      result: fail(id, label, `${w.path} is ${what}; serve refuses it (SYMLINK_NOT_ALLOWED)`, `set ${keyOf(index)} to the real directory the link points to`),
    };
  }
  if (!st.isDirectory()) {
    return { usable: false, result: fail(id, label, `${w.path} is not a directory`, `point ${keyOf(index)} at a directory`) };
  }
  return { usable: true, result: ok(id, label, `${w.path} (${access})`) };
}

export async function filesystemCheck(w: Workdir): Promise<{ result: CheckResult; mount: MountFacts | null }> {
  const id = `workdir.${w.alias}.filesystem`;
  const label = `workdir ${w.alias} filesystem`;
  let real: string;
  try {
    real = fs.realpathSync(w.path);
  } catch {
    return { mount: null, result: warn(id, label, "not measured (the root's real path cannot be resolved)") };
  }
  const mount = await mountOf(real);
  if (mount === "not-measured") return { mount: null, result: warn(id, label, `not measured on ${PLATFORM_NAME}`) };
  if (mount === null) return { mount: null, result: warn(id, label, "not measured (no mount found for the root)") };
  const text = `${mount.fsType}${mount.readOnly ? ", mounted read-only" : ""}`;
  const concern = fsTypeConcern(mount.fsType);
  if (concern) return { mount, result: warn(id, label, concern, "prefer a local filesystem for workdirs") };
  return { mount, result: ok(id, label, text) };
}

/** Whether deny, hidden and reserved names are matched case-insensitively here, and why. */
export function caseCheck(w: Workdir): CheckResult {
  const id = `workdir.${w.alias}.names`;
  const label = `workdir ${w.alias} names`;
  const cs = workdirPolicy(w).caseSensitivity;
  if (cs.basis === "detected-sensitive") {
    const nfc = cs.normalizationInsensitive ? ", after Unicode normalisation" : "";
    return ok(id, label, `matched case-sensitively${nfc} (detected: ${cs.reason})`);
  }
  if (cs.basis === "detected-insensitive") return ok(id, label, `matched case-insensitively (detected: ${cs.reason})`);
  return ok(id, label, `matched case-insensitively (unknown, the safe default: ${cs.reason})`);
}

export async function listingCheck(files: FileService, w: Workdir, maxEntries: number): Promise<CheckResult> {
  const id = `workdir.${w.alias}.read`;
  const label = `workdir ${w.alias} read`;
  try {
    // The same call (and so the same resolver, policy filter and root open) as list_directory.
    // The scan costs the same whatever the page size, so the page is as large as a caller's may be.
    const out = await files.listDirectory({ workdir: w.alias, path: "", limit: maxEntries });
    const n = out.has_more ? `more than ${out.returned}` : String(out.returned);
    return ok(id, label, `${n} ${out.returned === 1 && !out.has_more ? "entry" : "entries"} visible under policy`);
  } catch (err) {
    const e = err instanceof ServerfsError ? err : null;
    const code = e?.code ?? "INTERNAL_ERROR";
    return fail(id, label, `listing the root through the file service failed: ${code}`, listingHint(code));
  }
}

function listingHint(code: string): string {
  switch (code) {
    case "ACCESS_DENIED":
      return "give the serverfs user read and search permission on the root";
    case "SYMLINK_NOT_ALLOWED":
      return "point the workdir at the real directory, not a symlink";
    case "NATIVE_PLATFORM_UNSUPPORTED":
      return "run serve on Linux, macOS or Windows";
    case "RESOURCE_EXHAUSTED":
      return "raise the open-file limit (ulimit -n) of the serverfs process";
    default:
      return "check the root's permissions and run doctor again";
  }
}

export function writeCheck(w: Workdir, mount: MountFacts | null): CheckResult {
  const id = `workdir.${w.alias}.write`;
  const label = `workdir ${w.alias} write`;
  if (w.read_only) return ok(id, label, "not evaluated (read-only workdir)");
  if (mount?.readOnly) {
    return fail(id, label, `the filesystem at ${mount.mountPoint} is mounted read-only`, "remount it read-write, or set read_only = true for this workdir");
  }
  try {
    fs.accessSync(w.path, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EROFS") {
      return fail(id, label, "the filesystem is mounted read-only (EROFS)", "remount it read-write, or set read_only = true for this workdir");
    }
    return fail(
      id,
      label,
      `this user cannot create entries in the root (${code ?? "error"})`,
      "give the serverfs user write and search permission on the root, or set read_only = true",
    );
  }
  return ok(id, label, "writable by this user (checked with access(2); nothing was created)");
}
