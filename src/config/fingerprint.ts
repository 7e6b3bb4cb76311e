// The fingerprint of an ACP profile keys its capability snapshot: any change to what is
// launched (command, argv, proxy routing) or to the identity gives a new fingerprint, so a stale
// snapshot is never reused. Timeouts are excluded: they bound our waiting, not the agent.
import { createHash } from "node:crypto";
import { canonicalJson } from "../common/canonical-json.ts";

export interface LaunchFields {
  id: string;
  command: string;
  args: readonly string[];
  use_proxy: boolean;
}

export function acpFingerprint(p: LaunchFields): string {
  const canonical = canonicalJson({ id: p.id, command: p.command, args: p.args, use_proxy: p.use_proxy });
  return `sha256:${createHash("sha256").update(canonical, "utf8").digest("hex")}`;
}
