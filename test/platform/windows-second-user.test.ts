// Another local user against a real Bridge of the runner user (real Windows only: Wine has one
// user and enforces no DACL). The second user is made by .github/workflows/windows.yml
// (`net user /add`) and its programs run under its own logon (test/support/windows-second-user.ts).
// Each test also opens a control object the same way, one that lacks the defence under test, so a
// refusal is shown to come from the defence and not from the second user reaching nothing at all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { bridgeClientFor } from "../../src/bridge/ipc/connect.ts";
import { deploymentPaths } from "../../src/config/paths.ts";
import { ensureBridgeToken, readBridgeToken } from "../../platform/token.ts";
import { squatEndpoint, squatterHello, squatterProof } from "../support/pipe-squatter.ts";
import { serverfsArgv, startWindowsBridge, writeBridgeConfig, type WindowsBridge } from "../support/windows-bridge.ts";
import { accountName, probeAsSecondUser, secondUser, shareDir, startAsSecondUser, type SecondUser } from "../support/windows-second-user.ts";
import { removeTree } from "./windows-helpers.ts";

const ERROR_ACCESS_DENIED = 5;
const found = secondUser();
const user = "skip" in found ? null : found;
const title = (what: string) => `${what} (${"skip" in found ? found.skip : "real Windows, second local user"})`;

/** One TCP connection from the second user's squatter, read line by line. */
async function reportChannel(): Promise<{ port: number; next: () => Promise<string>; close: () => void }> {
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let buffered = "";
  const server = net.createServer((s) => {
    s.on("data", (d: Buffer) => {
      buffered += d.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl).replace(/\r$/, "");
        buffered = buffered.slice(nl + 1);
        const w = waiting.shift();
        if (w) w(line);
        else lines.push(line);
      }
    });
    s.on("error", () => {});
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  return {
    port: (server.address() as net.AddressInfo).port,
    next: () => new Promise<string>((ok) => (lines.length > 0 ? ok(lines.shift()!) : waiting.push(ok))),
    close: () => server.close(),
  };
}

describe.skipIf(user === null)(title("a second local user against the runner user's Bridge"), () => {
  const u = user as SecondUser;
  let root = "";
  let stateDir = "";
  let bridge: WindowsBridge | null = null;

  beforeAll(async () => {
    // In the share: the second user may read this directory and everything that inherits from it.
    root = shareDir(u, "bridge");
    stateDir = join(root, "state");
    mkdirSync(join(root, "repo"));
    const config = writeBridgeConfig(join(root, "serverfs.toml"), stateDir, join(root, "repo"), ["fake"]);
    bridge = await startWindowsBridge(config, stateDir);
  }, 120_000);

  afterAll(async () => {
    await bridge?.stop();
    if (root !== "") removeTree(root);
  });

  // Defence: the Bridge creates its pipe with a protected DACL that admits the current user only
  // (CreateNamedPipeW with SECURITY_ATTRIBUTES, no window with the default DACL). Without it the
  // pipe has the default named-pipe DACL, which grants Everyone read: the "bridge-read" probe would
  // open (error 0), as "control-read" does on a pipe this process creates with the default DACL.
  test("the second user cannot open the Bridge pipe, to read or to read and write: ERROR_ACCESS_DENIED", async () => {
    const pipe = deploymentPaths({ server: { state_dir: stateDir } }).socketPath;
    const controlPipe = `\\\\.\\pipe\\serverfs-runner-control-${process.pid}`;
    const control = await squatEndpoint(controlPipe, (s) => s.end());
    try {
      const report = await probeAsSecondUser(u, [
        { id: "bridge-read", kind: "pipe", path: pipe, access: "read" },
        { id: "bridge-readwrite", kind: "pipe", path: pipe, access: "readwrite" },
        { id: "control-read", kind: "pipe", path: controlPipe, access: "read" },
      ]);
      expect(accountName(report.user)).toBe(u.name.toLowerCase());
      expect(report.results).toEqual({
        "bridge-read": { error: ERROR_ACCESS_DENIED },
        "bridge-readwrite": { error: ERROR_ACCESS_DENIED },
        "control-read": { error: 0 },
      });
    } finally {
      await control.close();
    }
    // The Bridge still serves its own user.
    expect((await bridge!.client.call("bridge.status", {})).pid).toBe(bridge!.proc.pid);
  }, 120_000);

  // Defence: the token file is created with a protected DACL that admits the current user only
  // (platform/token.ts, tokenFileSddl). Without it the file inherits the state directory's access
  // list, which here lets the second user read: "token" would open and its text be the token, as
  // "control" (a file the test writes next to it, inheriting) opens and reads.
  test("the second user cannot read the Bridge token in the state directory: ERROR_ACCESS_DENIED", async () => {
    const token = readBridgeToken(stateDir);
    writeFileSync(join(stateDir, "readable.txt"), "inherits the directory's access list\n");
    const report = await probeAsSecondUser(u, [
      { id: "token", kind: "file", path: join(stateDir, "bridge.token"), access: "read" },
      { id: "control", kind: "file", path: join(stateDir, "readable.txt"), access: "read" },
    ]);
    expect(accountName(report.user)).toBe(u.name.toLowerCase());
    expect(report.results).toEqual({
      token: { error: ERROR_ACCESS_DENIED },
      control: { error: 0, text: "inherits the directory's access list\n" },
    });
    expect(JSON.stringify(report)).not.toContain(token);
  }, 120_000);

  // Defences: (1) the Bridge creates its pipe with FILE_FLAG_FIRST_PIPE_INSTANCE, so it refuses to
  // start on a name someone else holds; without it, it would join the squatter's pipe as another
  // instance (the squatter allows unlimited instances and grants Everyone full control) and run.
  // (2) The client proves the token by HMAC over both nonces and checks the server's proof before
  // it sends a request; without it (the old client wrote the token as its first line) the
  // squatter's bytes would hold the token and the request, and the call would not fail
  // BRIDGE_NOT_AUTHENTIC.
  test("the second user squats the pipe name first: the Bridge refuses to start, the client refuses the squatter and sends it neither token nor request", async () => {
    const dir = shareDir(u, "squat");
    const squatState = join(dir, "state");
    mkdirSync(join(dir, "repo"));
    const token = ensureBridgeToken(squatState);
    const pipe = deploymentPaths({ server: { state_dir: squatState } }).socketPath;
    const channel = await reportChannel();
    const squatter = startAsSecondUser(u, "squatter.ps1", {
      pipeName: pipe.replace(/^\\\\\.\\pipe\\/, ""),
      port: channel.port,
      greeting: squatterHello(),
      reply: squatterProof(),
    });
    let reported = false;
    try {
      const listening = await Promise.race([channel.next(), squatter.exited.then((code) => `exited ${code}: ${squatter.output().stderr}`)]);
      expect(listening.startsWith("listening ")).toBe(true);
      expect(accountName(listening.slice("listening ".length))).toBe(u.name.toLowerCase());

      const config = writeBridgeConfig(join(dir, "serverfs.toml"), squatState, join(dir, "repo"), ["fake"]);
      const real = Bun.spawn(serverfsArgv("bridge", "--config", config), { stdin: "ignore", stdout: "ignore", stderr: "pipe", windowsHide: true });
      const [code, stderr] = await Promise.all([real.exited, new Response(real.stderr).text()]);
      expect(code).not.toBe(0);
      expect(stderr).toContain("SOCKET_PATH_IN_USE");

      const err = await bridgeClientFor({ server: { state_dir: squatState } }, { timeoutMs: 30_000 })
        .call("bridge.status", {})
        .catch((e: unknown) => e);
      expect((err as { code?: unknown }).code).toBe("BRIDGE_NOT_AUTHENTIC");

      const received = await channel.next();
      reported = true;
      expect(received.startsWith("received ")).toBe(true);
      const bytes = Buffer.from(received.slice("received ".length), "base64").toString("latin1");
      expect(bytes).not.toContain(token);
      expect(bytes).not.toContain("bridge.status");
      // At most the client's own proof (a client that also checks the server's identity sends nothing).
      const lines = bytes.split("\n").filter((l) => l !== "");
      expect(lines.length).toBeLessThanOrEqual(1);
      for (const line of lines) expect(Object.keys(JSON.parse(line)).sort()).toEqual(["proof", "serverfs_handshake", "version"]);
      expect(await squatter.exited).toBe(0);
    } finally {
      // A squatter still waiting for its client (the test failed before one came) is released by
      // one connection, so no process of the second user outlives the test.
      if (!reported) net.connect(pipe).on("error", () => {}).on("connect", function (this: net.Socket) { this.destroy(); });
      await squatter.exited;
      channel.close();
      removeTree(dir);
    }
  }, 180_000);
});
