// The platform layer's own errors and their one mapping into serverfs errors (docs/platform.md,
// "Errors"), and the OS selector every per-OS choice goes through.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isPlatformFailure, PLATFORM_ERROR_CODES, PlatformError } from "../../platform/errors.ts";
import { leases, readBridgeToken } from "../../platform/index.ts";
import { IS_DARWIN, IS_LINUX, IS_WINDOWS, OS, osKindOf, PLATFORM_NAME, selectFor } from "../../platform/os.ts";
import { isErrorCode, ServerfsError, toServerfsError } from "../../src/errors.ts";

const REPO = path.resolve(import.meta.dir, "../..");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-platform-errors-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe("platform errors", () => {
  test("every platform code is a serverfs code", () => {
    expect(PLATFORM_ERROR_CODES.length).toBeGreaterThan(0);
    for (const code of PLATFORM_ERROR_CODES) expect(isErrorCode(code)).toBe(true);
  });

  test("loaded without src/, the platform throws its own PlatformError", () => {
    const missing = path.join(scratch, "none");
    const script = `
      import { readBridgeToken } from ${JSON.stringify(path.join(REPO, "platform/index.ts"))};
      try { readBridgeToken(${JSON.stringify(missing)}); console.log("no error"); }
      catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, toText: typeof e.toText })); }
    `;
    const run = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe", env: { ...process.env, BUN_OPTIONS: "" } });
    expect(run.stderr.toString()).toBe("");
    expect(JSON.parse(run.stdout.toString())).toEqual({
      name: "PlatformError",
      code: "BRIDGE_IDENTITY_UNAVAILABLE",
      message: "the Bridge token cannot be read",
      toText: "undefined",
    });
  });

  test("with src/errors.ts loaded, what the platform throws is a ServerfsError with the same code and message", () => {
    const dir = scratch;
    let caught: unknown;
    try {
      readBridgeToken(path.join(dir, "none"));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ServerfsError);
    expect((caught as ServerfsError).toText()).toBe("BRIDGE_IDENTITY_UNAVAILABLE: the Bridge token cannot be read");
    expect(isPlatformFailure(caught)).toBe(true);

    if (!IS_WINDOWS) {
      fs.mkdirSync(path.join(dir, "sub"));
      let lockErr: unknown;
      try {
        leases().tryAcquire(path.join(dir, "sub"));
      } catch (err) {
        lockErr = err;
      }
      expect(lockErr).toBeInstanceOf(ServerfsError);
      expect((lockErr as ServerfsError).code).toBe("LOCK_PATH_UNSAFE");
    }
  });

  test("toServerfsError maps a PlatformError with its code and message, and nothing else", () => {
    const mapped = toServerfsError(new PlatformError("SPAWN_FAILED", "the process could not be started (ENOENT)"));
    expect(mapped).toBeInstanceOf(ServerfsError);
    expect(mapped.toText()).toBe("SPAWN_FAILED: the process could not be started (ENOENT)");
    const foreign = toServerfsError(Object.assign(new Error("/secret/host/path"), { code: "SPAWN_FAILED" }));
    expect(foreign.toText()).toBe("INTERNAL_ERROR: unexpected internal error");
    expect(isPlatformFailure(new ServerfsError("IO_ERROR", "not raised by the platform"))).toBe(false);
  });
});

describe("the OS selector", () => {
  test("names each Node platform's kind", () => {
    expect(osKindOf("linux")).toBe("linux");
    expect(osKindOf("darwin")).toBe("darwin");
    expect(osKindOf("win32")).toBe("windows");
    expect(osKindOf("freebsd")).toBe("other");
    expect(OS).toBe(osKindOf(process.platform));
    expect(PLATFORM_NAME).toBe(process.platform);
    expect([IS_LINUX, IS_DARWIN, IS_WINDOWS].filter(Boolean).length).toBe(OS === "other" ? 0 : 1);
  });

  test("runs only the chosen implementation, falling back to `other`", () => {
    const ran: string[] = [];
    const choices = {
      linux: () => (ran.push("linux"), 1),
      windows: () => (ran.push("windows"), 3),
      other: () => (ran.push("other"), 0),
    };
    expect(selectFor("linux", choices)).toBe(1);
    expect(selectFor("win32", choices)).toBe(3);
    expect(selectFor("darwin", choices)).toBe(0);
    expect(selectFor("aix", choices)).toBe(0);
    expect(ran).toEqual(["linux", "windows", "other", "other"]);
  });
});
