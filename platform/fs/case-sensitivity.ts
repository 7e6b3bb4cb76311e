// Does the filesystem under a workdir root treat `ID_RSA` and `id_rsa` as one name? Asked once per
// workdir; the answer decides whether its path policy folds names (docs/security.md,
// "Case-insensitive filesystems"). Every probe only reads: nothing is ever created in the workdir.
// Whenever the answer is not certain, the result is "unknown", which callers treat as insensitive.

import { darwinCaseSensitivity } from "./case-darwin.ts";
import { linuxCaseSensitivity } from "./case-linux.ts";
import { insensitive, unknown, type CaseSensitivity } from "./case-result.ts";

export { type CaseBasis, type CaseSensitivity } from "./case-result.ts";

export function detectCaseSensitivity(root: string): CaseSensitivity {
  try {
    if (process.platform === "linux") return linuxCaseSensitivity(root);
    if (process.platform === "darwin") return darwinCaseSensitivity(root);
    // NTFS and ReFS match case-insensitively unless a directory opts out; the safe side is fixed.
    if (process.platform === "win32") return insensitive("Windows filesystems match names case-insensitively by default");
    return unknown(`not measured on ${process.platform}`);
  } catch {
    return unknown("the probe failed");
  }
}
