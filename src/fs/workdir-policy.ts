// The one place a workdir's PathPolicy is built, so serve, doctor and the Bridge agree on how its
// names are matched: the filesystem under the root is probed once per configured workdir object
// and process (read-only; the answer is fixed for the process, docs/security.md), and a
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

const built = new WeakMap<Workdir, BuiltPolicy>();

export function workdirPolicy(w: Workdir): BuiltPolicy {
  let b = built.get(w);
  if (b === undefined) {
    const caseSensitivity = detectCaseSensitivity(w.path);
    const policy = new PathPolicy(w, {
      caseInsensitive: caseSensitivity.insensitive,
      normalizationInsensitive: caseSensitivity.normalizationInsensitive === true,
    });
    b = { policy, caseSensitivity };
    built.set(w, b);
  }
  return b;
}
