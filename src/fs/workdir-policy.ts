// The one place a workdir's PathPolicy is built, so serve, doctor and the Bridge agree on how its
// names are matched: the filesystem under the root is probed once (read-only) and a
// case-insensitive or unknown answer makes the policy fold names (docs/security.md,
// "Case-insensitive filesystems").
import { detectCaseSensitivity, type CaseSensitivity } from "../../platform/fs/case-sensitivity.ts";
import type { Workdir } from "../config/types.ts";
import { PathPolicy } from "./policy.ts";

export type { CaseSensitivity };

export interface BuiltPolicy {
  policy: PathPolicy;
  caseSensitivity: CaseSensitivity;
}

export function workdirPolicy(w: Workdir): BuiltPolicy {
  const caseSensitivity = detectCaseSensitivity(w.path);
  const policy = new PathPolicy(w, {
    caseInsensitive: caseSensitivity.insensitive,
    normalizationInsensitive: caseSensitivity.normalizationInsensitive === true,
  });
  return { policy, caseSensitivity };
}
