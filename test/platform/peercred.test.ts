import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { peerCredentials, type PeerIdentity } from "../../platform/index.ts";
import { tempDir } from "../support/temp.ts";

const fixture = join(import.meta.dir, "fixtures", "unix-client.ts");
const dir = tempDir("serverfs-peer-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A real Bun.listen unix server that records the kernel-measured peer of each connection. */
function startServer(path: string) {
  const seen: PeerIdentity[] = [];
  const server = Bun.listen({
    unix: path,
    socket: {
      open(socket) {
        const fd = (socket as unknown as { fd: number }).fd;
        const peer = peerCredentials(fd);
        seen.push(peer);
        socket.write(`${peer.uid}:${peer.gid}:${peer.pid}\n`);
      },
      data() {},
    },
  });
  return { server, seen };
}

describe.skipIf(process.platform === "win32")("peer credentials on a real unix socket", () => {
  test("uid/gid/pid of a client process are measured by the kernel", async () => {
    const path = join(dir, "s1.sock");
    const { server, seen } = startServer(path);
    try {
      const client = Bun.spawn([process.execPath, fixture, path], { stdout: "pipe" });
      const line = (await new Response(client.stdout).text()).trim();
      await client.exited;
      expect(seen.length).toBe(1);
      expect(seen[0]!.uid).toBe(process.getuid!());
      expect(seen[0]!.gid).toBe(process.getgid!());
      if (process.platform === "linux") expect(seen[0]!.pid).toBe(client.pid);
      expect(line).toBe(`${seen[0]!.uid}:${seen[0]!.gid}:${seen[0]!.pid}`);
    } finally {
      server.stop(true);
    }
  });

  test("an invalid fd yields nulls (callers reject), never a throw", () => {
    expect(peerCredentials(-1)).toEqual({ uid: null, gid: null, pid: null });
    expect(peerCredentials(1.5)).toEqual({ uid: null, gid: null, pid: null });
    // fd 0 of the test runner is not a socket.
    expect(peerCredentials(0).uid).toBeNull();
  });

  // A real second uid needs root and setpriv; we run as root in CI containers and on this VM.
  const canSwitchUid = process.platform === "linux" && process.getuid?.() === 0 && existsSync("/usr/bin/setpriv");
  test.skipIf(!canSwitchUid)("a client running as uid 65534 is measured as 65534", async () => {
    const sub = tempDir("serverfs-peer2-");
    chmodSync(sub, 0o777);
    const path = join(sub, "s2.sock");
    const { server, seen } = startServer(path);
    chmodSync(path, 0o777);
    try {
      // The client is a plain `bun -e` so the nobody user needs no access to the repository.
      const code = `const s = await Bun.connect({ unix: ${JSON.stringify(path)}, socket: { data(k, d) { process.stdout.write(d); k.end(); } } });`;
      const client = Bun.spawn(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", code],
        { stdout: "pipe", stderr: "pipe", cwd: sub, env: { PATH: process.env.PATH ?? "", HOME: sub } },
      );
      const out = (await new Response(client.stdout).text()).trim();
      await client.exited;
      expect(seen.length).toBe(1);
      expect(seen[0]!.uid).toBe(65534);
      expect(seen[0]!.gid).toBe(65534);
      expect(out).toBe(`65534:65534:${seen[0]!.pid}`);
    } finally {
      server.stop(true);
      rmSync(sub, { recursive: true, force: true });
    }
  });
});
