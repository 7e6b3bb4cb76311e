// macOS-only: an edit of a file stamped `com.apple.provenance`, through the MCP tools on the
// darwin file backend. macOS 13+ stamps files written by a process it tracks; user processes may
// not set or copy that attribute (EPERM), so a replace that carried every xattr over failed with
// METADATA_PRESERVATION_FAILED. The backend skips it (platform/fs/xattr-darwin.ts) and keeps
// `com.apple.quarantine`. The test stamps its file itself: as the user, else with `sudo -n` (the
// macOS runners have passwordless sudo); where neither can, it skips and says so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { connect, type Harness, makeRegistry, ok, removeDir, tempDir } from "./helpers.ts";

const onMac = process.platform === "darwin";
const QUARANTINE = "0081;00000000;serverfs-test;";

function xattrNames(file: string): string[] {
  return Bun.spawnSync(["xattr", file]).stdout.toString().split("\n").filter(Boolean);
}

/** Stamp `file` with a provenance attribute; true when `xattr` then lists it. */
function stampProvenance(file: string): boolean {
  const value = ["-wx", "com.apple.provenance", "01 02 00 11 22 33 44 55 66 77 88", file];
  if (Bun.spawnSync(["xattr", ...value]).exitCode !== 0) Bun.spawnSync(["sudo", "-n", "xattr", ...value]);
  return xattrNames(file).includes("com.apple.provenance");
}

let base = "";
let stamped = false;
if (onMac) {
  base = tempDir("serverfs-provenance-");
  fs.mkdirSync(path.join(base, "w"));
  const file = path.join(base, "w", "stamped.txt");
  fs.writeFileSync(file, "alpha\nbeta\n");
  stamped = stampProvenance(file);
  Bun.spawnSync(["xattr", "-w", "com.apple.quarantine", QUARANTINE, file]);
}

describe.skipIf(!onMac)("an edit of a provenance-stamped file (needs macOS 13+: run on a Mac)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await connect(makeRegistry([{ alias: "w", path: path.join(base, "w"), read_only: false }]));
  });
  afterAll(async () => {
    await h.close();
    // sudo may have made the attribute root's; the directory is ours to remove either way
    removeDir(base);
  });

  test.skipIf(!stamped)("succeeds, writes the new bytes, and keeps com.apple.quarantine (skips where com.apple.provenance cannot be set even with sudo -n)", async () => {
    const file = path.join(base, "w", "stamped.txt");
    const before = ok<{ revision: string }>(await h.call("stat_file", { workdir: "w", path: "stamped.txt" }));
    const edited = ok<{ revision: string }>(
      await h.call("edit_text_file", { workdir: "w", path: "stamped.txt", expected_revision: before.revision, edits: [{ old_text: "beta", new_text: "gamma" }] }),
    );
    expect(edited.revision).not.toBe(before.revision);
    expect(fs.readFileSync(file, "utf8")).toBe("alpha\ngamma\n");
    expect(xattrNames(file)).toContain("com.apple.quarantine");
    expect(Bun.spawnSync(["xattr", "-p", "com.apple.quarantine", file]).stdout.toString().trim()).toBe(QUARANTINE);
  });
});
