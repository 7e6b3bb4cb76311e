// macOS-only containment checks (libproc walk, marker-file and sysctl marker scan). They skip
// elsewhere because libSystem exists only on macOS; the macos.yml workflow runs them. The
// independent observers are `lsof` on the task's marker file (it sees the inherited descriptor of
// SIP-restricted binaries too) and `ps -E`, whose environment column is blind for those binaries.
import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { markerDirectory } from "../../platform/darwin/marker-file.ts";
import { containment, peerCredentials } from "../../platform/index.ts";
import { SHAPES, type TreeShape } from "./shapes.ts";

const onMac = process.platform === "darwin";

function liveWithMarker(runId: string): number[] {
  const pids = new Set<number>();
  const states = new Map<number, string>();
  const out = Bun.spawnSync(["ps", "-axww", "-E", "-o", "pid=,stat=,command="]).stdout.toString();
  for (const line of out.split("\n")) {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    states.set(Number(m[1]), m[2]!);
    if (!m[2]!.startsWith("Z") && m[3]!.includes(`SERVERFS_RUN_ID=${runId}`)) pids.add(Number(m[1]));
  }
  const held = Bun.spawnSync(["lsof", "-t", `${markerDirectory()}/${runId}`]).stdout.toString();
  for (const pid of held.split("\n").filter(Boolean).map(Number)) if (!states.get(pid)?.startsWith("Z")) pids.add(pid);
  return [...pids];
}

describe.skipIf(!onMac)("macOS containment (needs libproc: `bun test test/platform/darwin.test.ts` on a Mac)", () => {
  // macOS has no setsid(1): escapees call setsid through perl's POSIX module instead.
  const macShapes: TreeShape[] = [
    ...SHAPES.filter((s) => !s.argv.join(" ").includes("setsid")),
    { name: "perl-setsid-grandchild", argv: ["sh", "-c", "perl -MPOSIX -e 'POSIX::setsid(); sleep 1000' & wait"], sleepers: 2 },
    {
      name: "perl-double-fork-daemon",
      argv: ["sh", "-c", "( perl -MPOSIX -e 'POSIX::setsid(); fork and exit; sleep 1000' & ) ; exit 0"],
      sleepers: 1,
    },
  ];
  for (const shape of macShapes) {
    test(`${shape.name}: stop proves zero survivors (x10)`, async () => {
      for (let i = 0; i < 10; i++) {
        const runId = `mac-${process.pid}-${shape.name}-${i}`;
        const p = await containment().spawn({ argv: shape.argv, cwd: tmpdir(), env: { PATH: "/usr/bin:/bin" }, runId });
        const end = Date.now() + 5000;
        while (liveWithMarker(runId).length < shape.sleepers && Date.now() < end) await Bun.sleep(20);
        // The observer must have seen the tree, or "zero survivors" below would prove nothing.
        const seen = liveWithMarker(runId);
        expect(seen.length).toBeGreaterThanOrEqual(shape.sleepers);
        const members = await p.members();
        for (const pid of seen) expect(members).toContain(pid);
        const evidence = await p.stop(shape.ignoresTerm ? 20 : 300);
        expect(evidence.proved).toBe(true);
        expect(liveWithMarker(runId)).toEqual([]);
      }
    }, 60_000);
  }

  test("getpeereid on a real unix socket", async () => {
    const path = `${tmpdir()}/sfs-${process.pid}.sock`;
    let seen: { uid: number | null } | null = null;
    const server = Bun.listen({
      unix: path,
      socket: {
        open(s) {
          seen = peerCredentials((s as unknown as { fd: number }).fd);
          s.end();
        },
        data() {},
      },
    });
    const client = await Bun.connect({ unix: path, socket: { data() {} } });
    for (let i = 0; i < 100 && seen === null; i++) await Bun.sleep(10);
    client.end();
    server.stop(true);
    expect(seen).not.toBeNull();
    expect(seen!.uid).toBe(process.getuid!());
  });
});
