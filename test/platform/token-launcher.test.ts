import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GO_BYTE, LAUNCHER_NOT_RELEASED_EXIT, LAUNCHER_SPAWN_FAILED_EXIT, launcherCommand } from "../../platform/launcher.ts";
import { ensureBridgeToken, readBridgeToken, tokensEqual } from "../../platform/token.ts";
import { tempDir } from "../support/temp.ts";
import { removeTree } from "./windows-helpers.ts";

const dir = tempDir("serverfs-token-");
// removeTree: Windows Bun's recursive rmSync fails with EFAULT under Wine.
afterAll(() => removeTree(dir));

describe("Bridge token", () => {
  test("created once (0600, 64 hex), read back identically, no temp files left", () => {
    const state = join(dir, "state");
    const token = ensureBridgeToken(state);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(ensureBridgeToken(state)).toBe(token);
    expect(readBridgeToken(state)).toBe(token);
    expect(readdirSync(state)).toEqual(["bridge.token"]);
    if (process.platform !== "win32") {
      expect(statSync(join(state, "bridge.token")).mode & 0o777).toBe(0o600);
      expect(statSync(state).mode & 0o777).toBe(0o700);
    }
    expect(readFileSync(join(state, "bridge.token"), "utf8")).toBe(`${token}\n`);
    expect(tokensEqual(token, token)).toBe(true);
    expect(tokensEqual(token, token.replace(/.$/, "x"))).toBe(false);
    expect(tokensEqual(token, token.slice(1))).toBe(false);
  });

  test("a reader never creates; malformed or over-permissive tokens are refused", () => {
    expect(() => readBridgeToken(join(dir, "none"))).toThrow(expect.objectContaining({ code: "BRIDGE_IDENTITY_UNAVAILABLE" }));
    const bad = join(dir, "bad");
    ensureBridgeToken(bad);
    writeFileSync(join(bad, "bridge.token"), "short\n");
    expect(() => readBridgeToken(bad)).toThrow(expect.objectContaining({ code: "BRIDGE_IDENTITY_UNAVAILABLE" }));
    if (process.platform !== "win32") {
      writeFileSync(join(bad, "bridge.token"), `${"a".repeat(64)}\n`);
      chmodSync(join(bad, "bridge.token"), 0o644);
      expect(() => readBridgeToken(bad)).toThrow(expect.objectContaining({ code: "STATE_DIRECTORY_UNSAFE" }));
    }
  });
});

// The launcher that closes the Windows job race is OS-neutral; run it here for real.
describe("go-byte launcher", () => {
  function start(argv: string[]) {
    const launcher = launcherCommand(argv);
    return Bun.spawn(launcher.argv, {
      // A task's launcher starts in its workdir, never in a Bun project (under Wine, Windows Bun
      // started in the checkout prints "directory mismatch" notes for its package.json).
      cwd: dir,
      // SYSTEMROOT and friends matter on Windows; everything else comes from the launcher.
      env: { ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<string, string>), ...launcher.env, KEEP: "yes" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  test("starts nothing until 'go', then passes stdio, env and exit code through", async () => {
    const marker = join(dir, "started");
    // The provider is Bun itself, so the same check runs on every OS (no sh on Windows).
    const provider = [
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "");`,
      `const e = (k) => process.env[k] ?? "unset";`,
      `process.stdout.write([e("KEEP"), e("BUN_BE_BUN"), e("SERVERFS_LAUNCH_ARGV"), ""].join("|"));`,
      `process.stdout.write(await Bun.stdin.text());`,
      `process.exit(9);`,
    ].join("\n");
    const p = start([process.execPath, "-e", provider]);
    await Bun.sleep(300);
    expect(readdirSync(dir)).not.toContain("started");
    p.stdin.write(new Uint8Array([GO_BYTE]));
    p.stdin.write("payload");
    await p.stdin.end();
    expect(await new Response(p.stdout).text()).toBe("yes|unset|unset|payload");
    expect(await p.exited).toBe(9);
    expect(readdirSync(dir)).toContain("started");
  });

  test("stdin closed without 'go' (or a wrong byte): exits 125 and never starts the target", async () => {
    const marker = join(dir, "never");
    for (const first of [null, 0x00]) {
      const p = start(["sh", "-c", `touch '${marker}'`]);
      if (first !== null) p.stdin.write(new Uint8Array([first]));
      await p.stdin.end();
      expect(await p.exited).toBe(LAUNCHER_NOT_RELEASED_EXIT);
    }
    expect(readdirSync(dir)).not.toContain("never");
  });

  test("a provider that cannot be started: exit 127 and one line naming only the errno", async () => {
    const p = start([join(dir, "no such provider")]);
    p.stdin.write(new Uint8Array([GO_BYTE]));
    await p.stdin.end();
    expect(await p.exited).toBe(LAUNCHER_SPAWN_FAILED_EXIT);
    const err = await new Response(p.stderr).text();
    expect(err).toBe("serverfs launcher: could not start the provider (ENOENT)\n");
  });
});
