// A squatter on the Bridge's named pipe: a process of this user that creates the pipe name FIRST
// (the name derives from the state directory, so anyone can compute it). The client must refuse it
// with BRIDGE_NOT_AUTHENTIC without sending it the token or any request, and the real Bridge must
// not start while the name is held. Also the token file's owner and DACL check, on a real NTFS-style
// security descriptor. Windows-only (named pipes, DACLs); the Windows lane runs it under Wine. The
// same handshake over unix sockets is test/bridge/pipe-handshake.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bridgeClientFor } from "../../src/bridge/ipc/connect.ts";
import { deploymentPaths } from "../../src/config/paths.ts";
import { ensureBridgeToken, readBridgeToken, tokenFileSddl } from "../../platform/token.ts";
import { fileSecuritySddl, setFileDacl } from "../../platform/windows/file-security.ts";
import { currentUserSid } from "../../platform/windows/pipe.ts";
import { squatEndpoint, squatterHello, squatterProof } from "../support/pipe-squatter.ts";
import { onWindows, removeTree } from "./windows-helpers.ts";

const repo = resolve(import.meta.dir, "../..");
const serverfsArgv = (...args: string[]) => {
  const exe = process.env.SERVERFS_WINDOWS_EXE;
  return exe ? [exe, ...args] : [process.execPath, join(repo, "src/cli.ts"), ...args];
};

describe.skipIf(!onWindows)("a squatter on the Bridge pipe (needs Windows: named pipes, DACLs)", () => {
  const root = onWindows ? mkdtempSync(join(tmpdir(), "serverfs-squat-")) : "";
  afterAll(() => removeTree(root));
  let serial = 0;
  function deployment() {
    const stateDir = join(root, `state-${++serial}`);
    mkdirSync(stateDir);
    const token = ensureBridgeToken(stateDir);
    return { stateDir, token, pipe: deploymentPaths({ server: { state_dir: stateDir } }).socketPath };
  }

  test("the client refuses a squatter with BRIDGE_NOT_AUTHENTIC; it receives neither the token nor a request", async () => {
    const greetings: Record<string, (s: Socket) => void> = {
      // What the old client answered: it sent the token first to whoever held the name.
      "waits for the client": () => {},
      "speaks a reply first": (s) => s.write(`${JSON.stringify({ request_id: null, ok: true, result: {} })}\n`),
      "plays the handshake without the token": (s) => {
        s.write(squatterHello());
        s.once("data", () => s.write(squatterProof()));
      },
    };
    for (const [name, greet] of Object.entries(greetings)) {
      const { stateDir, token, pipe } = deployment();
      const squatter = await squatEndpoint(pipe, greet);
      try {
        const client = bridgeClientFor({ server: { state_dir: stateDir } }, { timeoutMs: name === "waits for the client" ? 3000 : 20_000 });
        const err = await client.call("bridge.status", {}).catch((e) => e);
        // A squatter that never speaks is a Bridge that does not answer; the client sends nothing.
        const expected = name === "waits for the client" ? "AGENT_BRIDGE_UNAVAILABLE" : "BRIDGE_NOT_AUTHENTIC";
        expect({ name, code: err.code }).toEqual({ name, code: expected });
        const got = squatter.received();
        expect(got).toHaveLength(1);
        expect({ name, token: got[0]!.includes(token), request: got[0]!.includes("bridge.status") }).toEqual({ name, token: false, request: false });
        if (name === "plays the handshake without the token") {
          expect(JSON.parse(got[0]!)).toMatchObject({ serverfs_handshake: "client_proof", version: 1 });
        } else expect({ name, got: got[0] }).toEqual({ name, got: "" });
      } finally {
        await squatter.close();
      }
    }
  }, 60_000);

  test("the real Bridge cannot start while the squatter holds its pipe name: SOCKET_PATH_IN_USE", async () => {
    const { stateDir, pipe } = deployment();
    const squatter = await squatEndpoint(pipe, () => {});
    try {
      mkdirSync(join(root, `repo-${serial}`));
      const config = join(root, `serverfs-${serial}.toml`);
      writeFileSync(
        config,
        ["[server]", `state_dir = '${stateDir}'`, "[[workdirs]]", 'alias = "repo"', `path = '${join(root, `repo-${serial}`)}'`, "[agent]", "enabled = true", "enable_fake_runtime = true", ""].join("\n"),
      );
      const bridge = Bun.spawn(serverfsArgv("bridge", "--config", config), { stdin: "ignore", stdout: "ignore", stderr: "pipe", windowsHide: true });
      const [code, stderr] = await Promise.all([bridge.exited, new Response(bridge.stderr).text()]);
      expect(code).not.toBe(0);
      expect(stderr).toContain("SOCKET_PATH_IN_USE");
      // The Bridge never spoke to the squatter's pipe either.
      expect(squatter.received()).toEqual([]);
    } finally {
      await squatter.close();
    }
  }, 60_000);

  test("a new token file admits the current user only, and one that admits Everyone is refused: STATE_DIRECTORY_UNSAFE", async () => {
    const { stateDir, token, pipe } = deployment();
    const file = join(stateDir, "bridge.token");
    const me = currentUserSid();
    // Read back as the OS reports it (Wine adds SYSTEM and maps the deny entry to mode bits).
    expect(fileSecuritySddl(file)).toMatch(new RegExp(`^O:${me}D:P?(\\(A;;FA;;;SY\\))?\\(A;;FA;;;${me}\\)(\\(D;;FA;;;WD\\))?$`));
    expect(readBridgeToken(stateDir)).toBe(token);
    expect(setFileDacl(file, `D:P(A;;FA;;;${me})(A;;FR;;;WD)`)).toBe(true);
    expect(fileSecuritySddl(file)).toContain(";;;WD)");
    expect(() => readBridgeToken(stateDir)).toThrow(expect.objectContaining({ code: "STATE_DIRECTORY_UNSAFE" }));
    // The Bridge does not start on it, and a client refuses it before connecting to anything.
    expect(() => ensureBridgeToken(stateDir)).toThrow(expect.objectContaining({ code: "STATE_DIRECTORY_UNSAFE" }));
    const squatter = await squatEndpoint(pipe, () => {});
    try {
      await expect(bridgeClientFor({ server: { state_dir: stateDir } }, { timeoutMs: 10_000 }).call("bridge.status", {})).rejects.toMatchObject({
        code: "STATE_DIRECTORY_UNSAFE",
      });
      expect(squatter.received()).toEqual([]);
    } finally {
      await squatter.close();
    }
    // Made private again, it is accepted again.
    expect(setFileDacl(file, tokenFileSddl(me))).toBe(true);
    expect(readBridgeToken(stateDir)).toBe(token);
  }, 60_000);
});
