// Windows name rules (docs/security.md, "Windows names"). Win32 rewrites names before the
// filesystem sees them: it drops trailing dots and spaces (`id_rsa.` opens `id_rsa`), turns
// `CON`/`NUL.txt` into devices, reads `name:stream` as an alternate data stream and `C:` as a drive.
// serve opens through NT calls that do none of this, but other programs on the same machine do,
// so a name that Win32 would rewrite is refused rather than created or served under a spelling the
// deny rules never saw. Pure and lexical: applied to every component on Windows, testable anywhere.

/** Devices Win32 resolves in any directory, with or without an extension (`nul.tar.gz`). */
const DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])$/i;
/** Characters Win32 refuses in a name; `:` (streams, drives) is reported on its own. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0001-\u001f<>"|?*]/;

/** Why `name` (one component, never `.` or `..`) is not a portable Windows name, or null. */
export function windowsNameProblem(name: string): string | null {
  // NTFS, ReFS and exFAT store at most 255 UTF-16 units per name (Wine answers "not found" instead)
  if (name.length > 255) return "Windows names are at most 255 characters";
  if (name.includes(":")) return "names with ':' (alternate data streams, drive letters) are not allowed";
  if (FORBIDDEN.test(name)) return "name contains a character Windows does not allow";
  const last = name.charCodeAt(name.length - 1);
  if (last === 46 /* . */ || last === 32 /* space */) return "Windows names cannot end in a dot or a space";
  const dot = name.indexOf(".");
  const stem = (dot === -1 ? name : name.slice(0, dot)).replace(/ +$/, "");
  if (DEVICE.test(stem)) return "name is a reserved Windows device name";
  return null;
}

/** An absolute or drive/UNC/device spelling: `C:x`, `C:\x`, `\x`, `\\server\share`, `\\?\`, `\\.\`, `//x`. */
export function isWindowsRooted(raw: string): boolean {
  return /^[A-Za-z]:/.test(raw) || raw.startsWith("\\") || raw.startsWith("/");
}

/**
 * A component in the shape of an 8.3 short name (`PROGRA~1`, `ENVPRO~1.TXT`): the open of such a
 * component is checked against the long name it reaches (platform/fs/resolve-windows.ts).
 */
export function looksLikeShortName(name: string): boolean {
  return /~[0-9]/.test(name);
}
