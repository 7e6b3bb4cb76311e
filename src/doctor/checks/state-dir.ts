// The Bridge's private state: the directory itself (0700, ours, not a symlink) and everything in
// it (directories 0700, files and the socket 0600: no group or other bits, owned by us, no
// symlinks). The socket directory is checked too when it lives outside the state directory.
import fs from "node:fs";
import path from "node:path";
import { errnoCode } from "../../errors.ts";
import { isWithin } from "../../../platform/paths.ts";
import { bridgeCommands } from "../bridge-commands.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";
import { IS_WINDOWS } from "../../../platform/os.ts";

const MAX_ENTRIES = 10_000;
const MAX_DEPTH = 6;
const SHOWN = 5;

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

interface Offence {
  file: string;
  why: string;
  fix: "chmod" | "chown" | "symlink";
}

function inspect(file: string, st: fs.Stats, uid: number | null): Offence | null {
  if (st.isSymbolicLink()) return { file, why: "is a symlink", fix: "symlink" };
  if (uid !== null && st.uid !== uid) return { file, why: `is owned by uid ${st.uid}, not ${uid}`, fix: "chown" };
  if ((st.mode & 0o077) !== 0) {
    const want = st.isDirectory() ? "0700" : "0600";
    return { file, why: `has mode ${octal(st.mode)} (expected ${want})`, fix: "chmod" };
  }
  return null;
}

function walk(root: string, uid: number | null, offences: Offence[]): { entries: number; truncated: boolean } {
  let entries = 0;
  let truncated = false;
  const visit = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (err) {
      offences.push({ file: dir, why: `cannot be listed (${errnoCode(err) ?? "error"})`, fix: "chown" });
      return;
    }
    for (const name of names.sort()) {
      if (entries >= MAX_ENTRIES) {
        truncated = true;
        return;
      }
      entries++;
      const file = path.join(dir, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(file);
      } catch {
        continue; // vanished meanwhile
      }
      const offence = inspect(file, st, uid);
      if (offence) offences.push(offence);
      if (st.isDirectory() && !st.isSymbolicLink() && depth < MAX_DEPTH) visit(file, depth + 1);
    }
  };
  visit(root, 1);
  return { entries, truncated };
}

function hintFor(offences: readonly Offence[]): string {
  const steps: string[] = [];
  const chmod = offences.filter((o) => o.fix === "chmod").map((o) => o.file);
  const chown = offences.filter((o) => o.fix === "chown").map((o) => o.file);
  const links = offences.filter((o) => o.fix === "symlink").map((o) => o.file);
  if (chmod.length > 0) steps.push(`chmod go-rwx ${chmod.slice(0, SHOWN).join(" ")}${chmod.length > SHOWN ? " ..." : ""}`);
  if (chown.length > 0) steps.push(`give ${chown.slice(0, SHOWN).join(" ")}${chown.length > SHOWN ? " ..." : ""} back to the Bridge user (chown)`);
  if (links.length > 0) steps.push(`remove the symlink(s) ${links.slice(0, SHOWN).join(" ")} (nothing in the state directory is a link)`);
  return `${steps.join("; ")}; the Bridge's state must be private to its user`;
}

function describe(offences: readonly Offence[]): string {
  const shown = offences.slice(0, SHOWN).map((o) => `${o.file} ${o.why}`);
  return `${shown.join("; ")}${offences.length > SHOWN ? `; and ${offences.length - SHOWN} more` : ""}`;
}

export function stateDirChecks(ctx: DoctorContext): CheckResult[] {
  const { stateDir, runDir } = ctx.paths;
  const out: CheckResult[] = [];
  let st: fs.Stats;
  try {
    st = fs.lstatSync(stateDir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") {
      return [warn("state.dir", "state directory", `${stateDir} does not exist yet`, `start the Bridge once (${bridgeCommands(ctx).start}); it creates the directory 0700`)];
    }
    return [fail("state.dir", "state directory", `${stateDir} cannot be inspected (${errnoCode(err) ?? "error"})`, "give the Bridge user access to its state directory")];
  }
  if (IS_WINDOWS) {
    return [warn("state.dir", "state directory", `${stateDir}: ownership and ACLs not measured on Windows`)];
  }
  if (!st.isDirectory() || st.isSymbolicLink()) {
    return [fail("state.dir", "state directory", `${stateDir} is not a real directory`, `move it aside and let the Bridge recreate it: ${bridgeCommands(ctx).start}`)];
  }
  const top = inspect(stateDir, st, ctx.uid);
  out.push(
    top
      ? fail("state.dir", "state directory", `${top.file} ${top.why}`, hintFor([top]))
      : ok("state.dir", "state directory", `${stateDir} (mode ${octal(st.mode)}, owned by uid ${st.uid})`),
  );

  const offences: Offence[] = [];
  const { entries, truncated } = walk(stateDir, ctx.uid, offences);
  let extra = 0;
  if (!isWithin(runDir, stateDir)) {
    // The socket moved out of the state dir (sun_path limit): its directory must be just as private.
    try {
      const rst = fs.lstatSync(runDir);
      const o = inspect(runDir, rst, ctx.uid);
      if (o) offences.push(o);
      if (rst.isDirectory() && !rst.isSymbolicLink()) extra = walk(runDir, ctx.uid, offences).entries;
    } catch {
      // absent until the Bridge first listens
    }
  }
  const counted = `${entries + extra} entr${entries + extra === 1 ? "y" : "ies"} checked${truncated ? ` (first ${MAX_ENTRIES} only)` : ""}`;
  out.push(
    offences.length > 0
      ? fail("state.files", "state files", describe(offences), hintFor(offences))
      : ok("state.files", "state files", `${counted}: directories 0700, files 0600, all owned by this user`),
  );
  return out;
}

