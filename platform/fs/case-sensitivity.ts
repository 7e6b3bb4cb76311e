// Does the filesystem under a workdir root treat `ID_RSA` and `id_rsa` as one name? Asked once per
// workdir; the answer decides whether its path policy folds names (docs/security.md,
// "Case-insensitive filesystems"). Every probe only reads: nothing is ever created in the workdir.
// Whenever the answer is not certain, the result is "unknown", which callers treat as insensitive.

import { darwinCaseSensitivity } from "./case-darwin.ts";
import { linuxCaseSensitivity } from "./case-linux.ts";
import { insensitive, unknown, type CaseSensitivity } from "./case-result.ts";
import { PLATFORM_NAME, select } from "../os.ts";

export { type CaseBasis, type CaseSensitivity } from "./case-result.ts";

export function detectCaseSensitivity(root: string): CaseSensitivity {
  try {
    return select<CaseSensitivity>({
      linux: () => linuxCaseSensitivity(root),
      darwin: () => darwinCaseSensitivity(root),
      // NTFS and ReFS match case-insensitively unless a directory opts out; the safe side is fixed.
      windows: () => insensitive("Windows filesystems match names case-insensitively by default"),
      other: () => unknown(`not measured on ${PLATFORM_NAME}`),
    });
  } catch {
    return unknown("the probe failed");
  }
}
