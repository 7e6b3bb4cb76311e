// Whether a file's security descriptor, as SDDL (`O:<owner>D:<dacl>`), keeps it private to one
// user: the Windows counterpart of "owned by this uid, no group or other bits". Pure, so it is
// tested on every OS; the SDDL comes from ./file-security.ts.
//
// Private means: owned by the user, SYSTEM or Administrators (an elevated process's files belong to
// Administrators by default), with a DACL (a missing or null DACL admits everyone) whose every
// allow entry that applies to the file itself names the user, SYSTEM or Administrators. SYSTEM
// and Administrators can read any file anyway, as root can on POSIX. Deny entries only take access
// away; inherit-only entries do not apply to the file.

const SYSTEM = ["SY", "S-1-5-18"];
const ADMINISTRATORS = ["BA", "S-1-5-32-544"];
/** OWNER RIGHTS: whoever owns the file, which is checked to be trusted first. */
const OWNER_RIGHTS = ["OW", "S-1-3-4"];
const DENY_TYPES = new Set(["D", "OD", "XD"]);

function trusted(sid: string, userSid: string): boolean {
  const s = sid.toUpperCase();
  return s === userSid.toUpperCase() || SYSTEM.includes(s) || ADMINISTRATORS.includes(s);
}

/** Null when private to `userSid`; otherwise why not, in words fit for an error message. */
export function privateFileProblem(sddl: string, userSid: string): string | null {
  const owner = /^O:(S-\d+(?:-\d+)+|[A-Z]{2})/i.exec(sddl)?.[1];
  if (owner === undefined) return "its owner cannot be read";
  if (!trusted(owner, userSid)) return "it belongs to another user";
  const daclAt = sddl.indexOf("D:");
  if (daclAt === -1) return "it has no access control list";
  const dacl = sddl.slice(daclAt + 2).replace(/S:.*$/, "");
  const flags = /^[A-Z_]*/.exec(dacl)![0];
  if (flags.includes("NO_ACCESS_CONTROL")) return "its access control list admits everyone";
  const aces = dacl.slice(flags.length);
  if (!/^(\([^()]*\))*$/.test(aces)) return "its access control list cannot be read";
  for (const [, body] of aces.matchAll(/\(([^()]*)\)/g)) {
    const [type = "", aceFlags = "", rights = "", , , sid = ""] = body!.split(";");
    if (DENY_TYPES.has(type) || aceFlags.includes("IO")) continue;
    if (/^0x0+$/i.test(rights) || rights === "") continue;
    if (trusted(sid, userSid) || OWNER_RIGHTS.includes(sid.toUpperCase())) continue;
    return "another user or group may access it";
  }
  return null;
}
