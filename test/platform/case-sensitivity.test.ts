// The case-sensitivity probe on what this machine has: it never writes, an unopenable or
// symlinked root is "unknown" (so the policy folds), and on macOS pathconf(_PC_CASE_SENSITIVE)
// agrees with what a lookup of a case-swapped name observes. Real case-insensitive mounts are in
// test/fs/casefold-mount.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { detectCaseSensitivity } from "../../platform/fs/case-sensitivity.ts";
import { tempDir } from "../support/temp.ts";

const base = tempDir("serverfs-case-");
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

/** What the filesystem itself says: does `Probe` reach the file created as `probe`? */
function observedInsensitive(dir: string): boolean {
  fs.writeFileSync(path.join(dir, "probe"), "x");
  try {
    return fs.existsSync(path.join(dir, "PROBE"));
  } finally {
    fs.rmSync(path.join(dir, "probe"));
  }
}

describe("probe edges", () => {
  test("a missing root, a symlinked root and a file are unknown, so they fold; nothing is created", () => {
    fs.mkdirSync(path.join(base, "real"));
    fs.symlinkSync(path.join(base, "real"), path.join(base, "link"));
    fs.writeFileSync(path.join(base, "file"), "x");
    for (const p of ["missing", "link", "file"]) {
      const r = detectCaseSensitivity(path.join(base, p));
      expect([p, r]).toEqual([p, { insensitive: true, basis: "unknown", reason: "the root cannot be opened" }]);
    }
    expect(fs.readdirSync(base).sort()).toEqual(["file", "link", "real"]);
    expect(fs.readdirSync(path.join(base, "real"))).toEqual([]);
  });

  test.skipIf(process.platform !== "linux")("Linux: a filesystem type serverfs does not know (procfs) is unknown, not sensitive", () => {
    const r = detectCaseSensitivity("/proc");
    expect(r.basis).toBe("unknown");
    expect(r.insensitive).toBe(true);
    expect(r.reason).toBe("filesystem type 0x9fa0 is not known to serverfs");
  });

  test.skipIf(process.platform === "win32")("the answer matches what a case-swapped lookup observes in a fresh directory", () => {
    const dir = path.join(base, "observe");
    fs.mkdirSync(dir);
    const r = detectCaseSensitivity(dir);
    expect(fs.readdirSync(dir)).toEqual([]); // the probe wrote nothing
    const observed = observedInsensitive(dir);
    // Unknown is allowed only where it folds anyway; a definite answer must be the truth.
    if (r.basis !== "unknown") expect(r.insensitive).toBe(observed);
    else expect(r.insensitive).toBe(true);
  });
});

describe.skipIf(process.platform !== "darwin")(
  "macOS pathconf(_PC_CASE_SENSITIVE) (needs macOS: written against the documented ABI, it cannot run on the Linux CI)",
  () => {
    test("the temp volume gets a definite answer equal to the observed behaviour", () => {
      const dir = path.join(base, "mac");
      fs.mkdirSync(dir);
      const r = detectCaseSensitivity(dir);
      expect(r.basis).not.toBe("unknown");
      expect(r.insensitive).toBe(observedInsensitive(dir));
    });
  },
);

describe.skipIf(process.platform !== "win32")("Windows (needs Windows)", () => {
  test("always insensitive, detected", () => {
    expect(detectCaseSensitivity(base)).toEqual({
      insensitive: true,
      basis: "detected-insensitive",
      reason: "Windows filesystems match names case-insensitively by default",
    });
  });
});
