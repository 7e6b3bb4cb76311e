// The fingerprint of an ACP profile keys its capability snapshot: any change to what is
// launched (command, argv, proxy routing, temp-dir variables) or to the identity gives a new fingerprint, so a stale
// snapshot is never reused. Timeouts are excluded: they bound our waiting, not the agent.
// Bun's own hasher, not node:crypto: this module is on serve's start-up path (the normalizer),
// and loading node:crypto alone took 20-40 ms of a cold start on the 2-core CI VM.
import { canonicalJson } from "../common/canonical-json.ts";

export interface LaunchFields {
  id: string;
  command: string;
  args: readonly string[];
  use_proxy: boolean;
  tmpdir_env?: readonly string[];
}

export function acpFingerprint(p: LaunchFields): string {
  // tmpdir_env joins only when set, so profiles without it keep their fingerprints.
  const fields = { id: p.id, command: p.command, args: p.args, use_proxy: p.use_proxy };
  const canonical = canonicalJson(p.tmpdir_env !== undefined && p.tmpdir_env.length > 0 ? { ...fields, tmpdir_env: p.tmpdir_env } : fields);
  return `sha256:${new Bun.CryptoHasher("sha256").update(canonical, "utf8").digest("hex")}`;
}
