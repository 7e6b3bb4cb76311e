// The macOS decisions that are pure functions of OS facts, run on every OS: which xattrs an edit
// carries over, which Darwin releases serve refuses, which launchd domain `serverfs service`
// uses, the session type its plist names and how the domain is recorded, how bootstrap retries while a label drains, and how the two task-marker signals combine. The Mac-only halves (the real kernel, the
// real launchctl) are listed in docs/platform.md, "macOS: verified / written / checks to run on a Mac".
import { describe, expect, test } from "bun:test";
import {
  agentDomains,
  BOOTSTRAP_ATTEMPTS,
  BOOTSTRAP_RETRY_MS,
  bootstrapWithRetry,
  domainRecord,
  launchdDomain,
  parseDomainRecord,
  resolveDomain,
  sessionTypeFor,
} from "../../platform/darwin/launchd-domain.ts";
import { markerFromPaths, markerVerdict } from "../../platform/darwin/marker-file.ts";
import { vnodeFds, vnodePath } from "../../platform/darwin/proc-reader.ts";
import { launchAgentPlist } from "../../platform/darwin/service.ts";
import { MARKER_UNREADABLE } from "../../platform/posix/process-table.ts";
import { assertDarwinRelease, darwinReleaseProblem, osReleaseProblem } from "../../platform/darwin/version.ts";
import { attrListRequest, decodeBulk } from "../../platform/fs/dirlist-darwin.ts";
import { darwinPreservesXattr } from "../../platform/fs/xattr-darwin.ts";
import type { CommandResult } from "../../platform/service/types.ts";
import { platformCheck } from "../../src/doctor/checks/version.ts";
import { fsTypeConcern } from "../../src/doctor/fstype.ts";

describe("macOS xattr policy on replace", () => {
  test("system-managed attributes the kernel refuses to user processes are skipped", () => {
    expect(darwinPreservesXattr("com.apple.provenance")).toBe(false);
    expect(darwinPreservesXattr("com.apple.macl")).toBe(false);
  });
  test("quarantine and the SIP marker are kept, so a copy that fails still fails the edit", () => {
    expect(darwinPreservesXattr("com.apple.quarantine")).toBe(true);
    expect(darwinPreservesXattr("com.apple.rootless")).toBe(true);
  });
  test("every other attribute is carried over; near-miss names are not skipped", () => {
    for (const name of ["com.apple.FinderInfo", "com.apple.ResourceFork", "com.apple.metadata:kMDItemWhereFroms", "user.x", "com.apple.provenance2", "com.apple.provenanc", "COM.APPLE.PROVENANCE", ""]) {
      expect(darwinPreservesXattr(name)).toBe(true);
    }
  });
});

describe("Darwin release gate", () => {
  test("Darwin 20 (macOS 11) and later are served", () => {
    for (const r of ["20.0.0", "20.6.0", "22.6.0", "24.1.0", "25.0.0", "100.1.2"]) expect(darwinReleaseProblem(r)).toBeNull();
  });
  test("Darwin 19 and older are refused with PLATFORM_UNSUPPORTED", () => {
    for (const r of ["19.6.0", "18.7.0", "9.8.0", "0.1"]) {
      expect(darwinReleaseProblem(r)).toContain("O_NOFOLLOW_ANY");
      expect(() => assertDarwinRelease(r)).toThrow(expect.objectContaining({ code: "PLATFORM_UNSUPPORTED" }));
    }
  });
  test("an unparseable release is refused, not assumed new", () => {
    for (const r of ["", "abc", "v24.1", ".24"]) {
      expect(darwinReleaseProblem(r)).toContain("unrecognised Darwin release");
      expect(() => assertDarwinRelease(r)).toThrow(expect.objectContaining({ code: "PLATFORM_UNSUPPORTED" }));
    }
  });
  test("only Darwin has a minimum release", () => {
    expect(osReleaseProblem("linux", "4.4.0")).toBeNull();
    expect(osReleaseProblem("win32", "10.0.19045")).toBeNull();
    expect(osReleaseProblem("darwin", "19.6.0")).not.toBeNull();
  });
  test("doctor's platform line fails on a refused release and names the code", () => {
    const bad = platformCheck("darwin", "19.6.0", "darwin x64 (19.6.0)");
    expect(bad.status).toBe("FAIL");
    expect(bad.detail).toContain("PLATFORM_UNSUPPORTED");
    expect(platformCheck("darwin", "24.1.0", "darwin arm64 (24.1.0)").status).toBe("OK");
  });
});

const result = (code: number, found = true): CommandResult => ({ found, code, stdout: "", stderr: "" });

describe("launchd domain", () => {
  test("gui/<uid> when it exists (a console login)", () => {
    const calls: string[][] = [];
    const d = launchdDomain(501, (args) => (calls.push(args), result(0)));
    expect(d).toEqual({ domain: "gui/501", fallback: false });
    expect(calls).toEqual([["print", "gui/501"]]);
  });
  test("user/<uid> when there is no GUI login (launchctl print fails, e.g. 113 over SSH)", () => {
    expect(launchdDomain(501, () => result(113))).toEqual({ domain: "user/501", fallback: true });
  });
  test("bootstrap retries only EIO (5), a bounded number of times", () => {
    const codes = [5, 5, 0];
    const sleeps: number[] = [];
    const calls: string[][] = [];
    const r = bootstrapWithRetry("gui/501", "/p.plist", (args) => (calls.push(args), result(codes.shift()!)), (ms) => sleeps.push(ms));
    expect(r.code).toBe(0);
    expect(calls).toEqual([0, 1, 2].map(() => ["bootstrap", "gui/501", "/p.plist"]));
    expect(sleeps).toEqual([BOOTSTRAP_RETRY_MS, BOOTSTRAP_RETRY_MS]);

    let n = 0;
    const stuck = bootstrapWithRetry("gui/501", "/p.plist", () => (n++, result(5)), () => {});
    expect(stuck.code).toBe(5);
    expect(n).toBe(BOOTSTRAP_ATTEMPTS);

    let m = 0;
    expect(bootstrapWithRetry("gui/501", "/p.plist", () => (m++, result(37)), () => {}).code).toBe(37);
    expect(m).toBe(1);
  });
});

describe("LaunchAgent plist", () => {
  const def = { executable: ["/usr/local/bin/serverfs"], configPath: "/Users/u/c.toml" };
  const host = { platform: "darwin" as const, home: "/Users/u", env: {}, uid: 501 };
  test("the LaunchAgent runs at Standard, not Background, process type", () => {
    for (const type of ["Aqua", "Background"] as const) {
      const plist = launchAgentPlist(def, host, type);
      expect(plist.match(/<key>ProcessType<\/key>\n {2}<string>[^<]*<\/string>/g)).toEqual(["<key>ProcessType</key>\n  <string>Standard</string>"]);
    }
  });
  test("LimitLoadToSessionType is the recorded domain's session: Aqua for gui/<uid>, Background for user/<uid>", () => {
    expect(sessionTypeFor("gui/501")).toBe("Aqua");
    expect(sessionTypeFor("user/501")).toBe("Background");
    expect(launchAgentPlist(def, host, sessionTypeFor("user/501"))).toContain("  <key>LimitLoadToSessionType</key>\n  <string>Background</string>\n");
    expect(launchAgentPlist(def, host, sessionTypeFor("gui/501"))).toContain("  <key>LimitLoadToSessionType</key>\n  <string>Aqua</string>\n");
    expect(launchAgentPlist(def, host).match(/LimitLoadToSessionType/g)).toHaveLength(1);
  });
});

describe("launchd domain record", () => {
  test("exactly one of this uid's two agent domains, one line", () => {
    expect(domainRecord("user/501")).toBe("user/501\n");
    expect(parseDomainRecord("user/501\n", 501)).toBe("user/501");
    expect(parseDomainRecord("gui/501", 501)).toBe("gui/501");
    for (const bad of ["", "\n", "gui/502\n", "user/5010\n", "system\n", "user/501\n\n", " user/501\n", "user/501\r\n", "login/100008\n"]) {
      expect(parseDomainRecord(bad, 501)).toBeNull();
    }
  });
  test("a valid record is used without a probe; none or a damaged one is probed, and the note says which", () => {
    const calls: string[][] = [];
    const run = (args: string[]) => (calls.push(args), result(113));
    expect(resolveDomain(501, "gui/501\n", run)).toEqual({ domain: "gui/501", recorded: true, notes: [] });
    expect(calls).toEqual([]);
    const none = resolveDomain(501, null, run);
    expect(none).toMatchObject({ domain: "user/501", recorded: false });
    expect(none.notes[0]).toStartWith("no launchd domain record (installed by an older serverfs?): probed, gui/501 does not exist, using user/501");
    expect(resolveDomain(501, "gui/7\n", () => result(0)).notes[0]).toStartWith("the launchd domain record is not valid: probed, using gui/501");
    expect(agentDomains(501)).toEqual(["gui/501", "user/501"]);
  });
});

describe("doctor filesystem types", () => {
  test("macFUSE mounts are flagged like other FUSE mounts", () => {
    for (const t of ["macfuse", "osxfuse", "osxfusefs", "fuse", "fuse.sshfs"]) expect(fsTypeConcern(t)).toContain("FUSE");
    for (const t of ["apfs", "hfs", "ext4"]) expect(fsTypeConcern(t)).toBeNull();
  });
});

describe("macOS task marker", () => {
  const U: typeof MARKER_UNREADABLE = MARKER_UNREADABLE;
  test("a marker from either signal wins; the descriptor signal first", () => {
    expect(markerVerdict("run-a", U)).toBe("run-a");
    expect(markerVerdict(null, "run-b")).toBe("run-b");
    expect(markerVerdict(U, "run-b")).toBe("run-b");
    expect(markerVerdict("run-a", "run-b")).toBe("run-a");
  });
  test("an environment hidden by SIP with a readable descriptor table is 'no marker'", () => {
    expect(markerVerdict(null, U)).toBeNull();
    expect(markerVerdict(null, null)).toBeNull();
    expect(markerVerdict(U, null)).toBeNull();
  });
  test("neither signal readable: unreadable, so the stop is not proved", () => {
    expect(markerVerdict(U, U)).toBe(U);
  });
  test("a run id spelled like a sentinel is still just a run id", () => {
    expect(markerVerdict("unreadable", U)).toBe("unreadable");
  });
  test("the marker file is matched by exact name directly in the marker directory", () => {
    const dir = "/private/var/folders/xy/T/serverfs-markers-501";
    const markers = ["run-a", "run-b"];
    expect(markerFromPaths(["/dev/null", `${dir}/run-b`], dir, markers)).toBe("run-b");
    for (const other of [`${dir}/run-c`, `${dir}/run-a.tmp`, `${dir}/x/run-a`, `${dir}-evil/run-a`, `/tmp/run-a`, dir]) {
      expect(markerFromPaths([other], dir, markers)).toBeNull();
    }
  });
  test("PROC_PIDLISTFDS and vnode_fdinfowithpath decoding (sys/proc_info.h layout)", () => {
    const list = new Uint8Array(8 * 4);
    const v = new DataView(list.buffer);
    [[0, 1], [3, 1], [4, 2], [7, 1]].forEach(([fd, type], i) => {
      v.setInt32(i * 8, fd!, true);
      v.setUint32(i * 8 + 4, type!, true);
    });
    expect(vnodeFds(list, list.length)).toEqual([0, 3, 7]);
    expect(vnodeFds(list, 16)).toEqual([0, 3]);
    const info = new Uint8Array(1200);
    info.set(new TextEncoder().encode("/private/tmp/m/run-a"), 176);
    expect(vnodePath(info)).toBe("/private/tmp/m/run-a");
  });
});

/** One getattrlistbulk entry as sys/attr.h lays it out with FSOPT_PACK_INVAL_ATTRS. */
function bulkEntry(name: string, vtype: number, error = 0): Uint8Array {
  const bytes = new TextEncoder().encode(`${name}\0`);
  const length = Math.ceil((40 + bytes.length) / 4) * 4;
  const b = new Uint8Array(length);
  const v = new DataView(b.buffer);
  v.setUint32(0, length, true);
  v.setUint32(4, 0xa0000009, true);
  v.setUint32(24, error, true);
  v.setInt32(28, 40 - 28, true);
  v.setUint32(32, bytes.length, true);
  v.setUint32(36, vtype, true);
  b.set(bytes, 40);
  return b;
}
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
};

describe("macOS listing through the held descriptor (getattrlistbulk decoding)", () => {
  test("the request asks for returned attrs, name, error and object type (struct attrlist)", () => {
    const r = new DataView(attrListRequest().buffer);
    expect(r.byteLength).toBe(24);
    expect(r.getUint16(0, true)).toBe(5);
    expect(r.getUint32(4, true)).toBe(0xa0000009);
  });
  test("names and kinds of each entry, UTF-8 and odd lengths included", () => {
    const buf = concat(bulkEntry("a.txt", 1), bulkEntry("sub", 2), bulkEntry("link", 5), bulkEntry("sock", 6), bulkEntry("é-ü", 1), bulkEntry("x", 99));
    expect(decodeBulk(buf, 6)).toEqual([
      { name: "a.txt", kind: "file" },
      { name: "sub", kind: "directory" },
      { name: "link", kind: "symlink" },
      { name: "sock", kind: "other" },
      { name: "é-ü", kind: "file" },
      { name: "x", kind: "unknown" },
    ]);
  });
  test("an entry carrying its own error is still listed (kind unknown), never dropped", () => {
    expect(decodeBulk(concat(bulkEntry("ok", 1), bulkEntry("locked", 1, 13)), 2)).toEqual([
      { name: "ok", kind: "file" },
      { name: "locked", kind: "unknown" },
    ]);
  });
  test("a malformed buffer fails with EIO, never reads past the buffer", () => {
    const good = bulkEntry("name", 1);
    expect(() => decodeBulk(good, 2)).toThrow(expect.objectContaining({ errno: 5 }));
    const short = good.slice();
    new DataView(short.buffer).setUint32(0, 8, true);
    expect(() => decodeBulk(short, 1)).toThrow(expect.objectContaining({ errno: 5 }));
    const outside = good.slice();
    new DataView(outside.buffer).setUint32(32, 4096, true);
    expect(() => decodeBulk(outside, 1)).toThrow(expect.objectContaining({ errno: 5 }));
  });
});
