import { describe, expect, test } from "bun:test";
import { commandHelp } from "../../src/commands/help.ts";
import { COMMANDS } from "../../src/commands/registry.ts";
import { VERSION } from "../../src/version.ts";
import { runCli } from "../support/proc.ts";

const run = (args: string[]) => runCli(args, { cwd: process.cwd() });

describe("serverfs CLI dispatcher", () => {
  test("--version prints the package version on stdout and exits 0", () => {
    const r = run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`serverfs ${VERSION}\n`);
    expect(r.stderr).toBe("");
  });

  test("help lists every command of the contract", () => {
    const r = run(["help"]);
    expect(r.code).toBe(0);
    for (const name of ["serve", "bridge", "render-config", "doctor", "tasks", "service", "connect", "init"]) {
      expect(r.stdout).toContain(`  ${name} `);
    }
  });

  test("help <command> prints that command's usage", () => {
    for (const name of Object.keys(COMMANDS)) {
      const r = run(["help", name]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${commandHelp(COMMANDS[name]!.spec)}\n`);
    }
  });

  test("unknown command: one line on stderr, exit 2, nothing on stdout", () => {
    const r = run(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });

  test("unknown flag on a real command: one line on stderr, exit 2", () => {
    const r = run(["render-config", "--bogus-flag"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--bogus-flag");
  });

  test("flag names are own names only: --constructor, --toString and --__proto__ are unknown flags", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const r = run(["render-config", `--${name}`]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`unknown flag '--${name}'`);
    }
  });

  test("unknown help topic and stray --version arguments are usage errors", () => {
    expect(run(["help", "nope"]).code).toBe(2);
    expect(run(["--version", "extra"]).code).toBe(2);
  });

  test("no stack trace without SERVERFS_DEBUG", () => {
    const r = run(["frobnicate"]);
    expect(r.stderr).not.toContain("    at ");
  });
});
