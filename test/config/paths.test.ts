// Deployment path derivation for each OS (pure function of the registry and host facts), plus
// the live socket-length fallback on this machine.
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { deploymentPaths, leaseFileName, leasePath, type HostFacts } from "../../src/config/paths.ts";
import type { Registry } from "../../src/config/types.ts";
import { cleanupTempDirs, load, tempDir, toml, wd } from "./helpers.ts";

afterAll(cleanupTempDirs);

async function registry(stateDir?: string): Promise<Registry> {
  const server = stateDir ? `[server]\nstate_dir = ${JSON.stringify(stateDir)}\n` : "";
  return (await load(toml(`${server}${wd("docs")}${wd("Docs", "/other")}`))).registry;
}

const linux: HostFacts = { platform: "linux", env: {}, homedir: "/home/ann", uid: 1000 };

describe("deploymentPaths", () => {
  test("Linux default: ~/.local/state/serverfs, socket under run/", async () => {
    const p = deploymentPaths(await registry(), linux);
    expect(p).toEqual({
      stateDir: "/home/ann/.local/state/serverfs",
      socketPath: "/home/ann/.local/state/serverfs/run/bridge.sock",
      dbPath: "/home/ann/.local/state/serverfs/bridge.sqlite3",
      locksDir: "/home/ann/.local/state/serverfs/locks",
      spoolDir: "/home/ann/.local/state/serverfs/spool",
      tmpDir: "/home/ann/.local/state/serverfs/tmp",
      runDir: "/home/ann/.local/state/serverfs/run",
    });
  });

  test("Linux honours an absolute XDG_STATE_HOME and ignores a relative one", async () => {
    const r = await registry();
    expect(deploymentPaths(r, { ...linux, env: { XDG_STATE_HOME: "/xdg" } }).stateDir).toBe("/xdg/serverfs");
    expect(deploymentPaths(r, { ...linux, env: { XDG_STATE_HOME: "rel" } }).stateDir).toBe("/home/ann/.local/state/serverfs");
  });

  test("macOS default and Windows default with a named pipe", async () => {
    const r = await registry();
    const mac = deploymentPaths(r, { platform: "darwin", env: {}, homedir: "/Users/ann", uid: 501 });
    expect(mac.stateDir).toBe("/Users/ann/Library/Application Support/serverfs");
    expect(mac.socketPath).toBe("/Users/ann/Library/Application Support/serverfs/run/bridge.sock");
    const win = deploymentPaths(r, { platform: "win32", env: { LOCALAPPDATA: "C:\\Users\\ann\\AppData\\Local" }, homedir: "C:\\Users\\ann", uid: -1 });
    expect(win.stateDir).toBe("C:\\Users\\ann\\AppData\\Local\\serverfs");
    expect(win.socketPath).toMatch(/^\\\\\.\\pipe\\serverfs-[0-9a-f]{16}$/);
    expect(win.dbPath).toBe("C:\\Users\\ann\\AppData\\Local\\serverfs\\bridge.sqlite3");
    expect(win.runDir).toBe("C:\\Users\\ann\\AppData\\Local\\serverfs\\run");
    const other = deploymentPaths(await registry("D:\\state"), { platform: "win32", env: {}, homedir: "C:\\Users\\ann", uid: -1 });
    expect(other.socketPath).not.toBe(win.socketPath);
  });

  test("server.state_dir overrides the default", async () => {
    expect(deploymentPaths(await registry("/srv/state"), linux).stateDir).toBe("/srv/state");
  });

  test("a socket path beyond sun_path falls back to XDG_RUNTIME_DIR, then /tmp, deterministically", async () => {
    const long = `/srv/${"x".repeat(90)}`;
    const r = await registry(long);
    const viaXdg = deploymentPaths(r, { ...linux, env: { XDG_RUNTIME_DIR: "/run/user/1000" } });
    expect(viaXdg.socketPath).toMatch(/^\/run\/user\/1000\/serverfs-[0-9a-f]{16}\/bridge\.sock$/);
    expect(viaXdg.runDir).toBe(path.posix.dirname(viaXdg.socketPath));
    expect(deploymentPaths(r, { ...linux, env: { XDG_RUNTIME_DIR: "/run/user/1000" } }).socketPath).toBe(viaXdg.socketPath);
    const viaTmp = deploymentPaths(r, linux);
    expect(viaTmp.socketPath).toMatch(/^\/tmp\/serverfs-1000-[0-9a-f]{16}\/bridge\.sock$/);
    // macOS allows 4 bytes less: a path that fits Linux exactly does not fit macOS.
    const edge = `/s/${"y".repeat(107 - 1 - "/s/".length - "/run/bridge.sock".length)}`;
    const re = await registry(edge);
    expect(Buffer.byteLength(`${edge}/run/bridge.sock`)).toBe(106);
    expect(deploymentPaths(re, linux).socketPath).toBe(`${edge}/run/bridge.sock`);
    expect(deploymentPaths(re, { ...linux, platform: "darwin" }).socketPath).toMatch(/^\/tmp\/serverfs-1000-/);
  });

  test("the fallback socket path really binds on this machine where the preferred one cannot", async () => {
    if (process.platform === "win32") return; // named pipes, no sun_path limit
    const deep = path.join(tempDir(), "d".repeat(100));
    fs.mkdirSync(path.join(deep, "run"), { recursive: true });
    const p = deploymentPaths(await registry(deep));
    expect(p.socketPath.startsWith(deep)).toBe(false);
    fs.mkdirSync(p.runDir, { recursive: true, mode: 0o700 });
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(p.socketPath, () => resolve());
    });
    expect(fs.statSync(p.socketPath).isSocket()).toBe(true);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(p.runDir, { recursive: true, force: true });
  });

  test("lease files are distinct for aliases that differ only in case", async () => {
    const r = await registry("/srv/state");
    const a = leasePath(r, "docs", linux);
    const b = leasePath(r, "Docs", linux);
    expect(a).toMatch(/^\/srv\/state\/locks\/docs-[0-9a-f]{8}\.lock$/);
    expect(b).toMatch(/^\/srv\/state\/locks\/Docs-[0-9a-f]{8}\.lock$/);
    expect(a.toLowerCase()).not.toBe(b.toLowerCase());
    expect(leaseFileName("docs")).toBe(path.posix.basename(a));
  });
});
