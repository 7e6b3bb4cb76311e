// The Bridge pipe's DACL on a real named pipe (platform/windows/pipe-dacl.ts, docs/platform.md
// "The Bridge pipe"). Windows-only; the Windows lane runs it under Wine, where the DACL is set and
// read back but not enforced (every Wine process runs as one user, and a token whose user SID is
// deny-only still opens any pipe), so the refusal of another identity needs real Windows.
import { describe, expect, test } from "bun:test";
import net from "node:net";
import { listenWindowsPipe } from "../../src/bridge/ipc/server.windows.ts";
import { currentUserSid } from "../../platform/windows/pipe.ts";
import { pipeDaclSddl } from "../../platform/windows/pipe-dacl.ts";
import { isWine, onWindows, openAsDenyOnlyUser } from "./windows-helpers.ts";

const ERROR_FILE_NOT_FOUND = 2;
const ERROR_ACCESS_DENIED = 5;
let serial = 0;
const pipePath = () => `\\\\.\\pipe\\serverfs-dacl-test-${process.pid}-${++serial}`;
const dispatch = async () => ({ ok: true });

describe.skipIf(!onWindows)("the Bridge pipe's DACL (needs Windows: named pipes)", () => {
  test("the listening pipe carries, from its creation, a protected DACL: network logons denied, the current user allowed", async () => {
    const path = pipePath();
    const listener = await listenWindowsPipe({ pipePath: path, token: "t", dispatch });
    try {
      // The pipe is created with it (no DACL is set afterwards any more), so this is its first DACL.
      expect(pipeDaclSddl(path)).toMatch(new RegExp(`^D:P\\(D;;(GA|FA);;;NU\\)\\(A;;(GA|FA);;;${currentUserSid()}\\)$`));
    } finally {
      await listener.close();
    }
  });

  test("a pipe whose DACL cannot be built is never created: SOCKET_DIRECTORY_UNSAFE, and no pipe of that name exists", async () => {
    const path = pipePath();
    await expect(listenWindowsPipe({ pipePath: path, token: "t", dispatch, sddl: () => "D:(not an ACE)" })).rejects.toMatchObject({
      code: "SOCKET_DIRECTORY_UNSAFE",
    });
    expect(pipeDaclSddl(path)).toBeNull();
    const reached = await new Promise<boolean>((resolve) => {
      const s = net.connect({ path });
      s.on("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    expect(reached).toBe(false);
  });

  test.skipIf(isWine)("another identity is refused by the DACL, which a default pipe would let in (Wine does not enforce pipe DACLs)", async () => {
    const plain = pipePath();
    const server = net.createServer((s) => s.on("error", () => {}));
    await new Promise<void>((resolve) => server.listen(plain, () => resolve()));
    const path = pipePath();
    const listener = await listenWindowsPipe({ pipePath: path, token: "t", dispatch });
    try {
      // The control: a default pipe DACL grants Everyone read access.
      expect(openAsDenyOnlyUser(plain)).toBe(0);
      expect(openAsDenyOnlyUser(path)).toBe(ERROR_ACCESS_DENIED);
    } finally {
      await listener.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test("a pipe that does not exist is reported as such by the same check", () => {
    expect(openAsDenyOnlyUser(pipePath())).toBe(ERROR_FILE_NOT_FOUND);
  });
});
