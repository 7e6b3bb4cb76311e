// Overlapping workdirs through the real CLI: `render-config` and `doctor` warn about every pair of
// roots where one is, or lies inside, the other, naming both aliases and their keys; the real
// `serverfs bridge` refuses to start with WORKDIR_OVERLAP (exit 1, nothing created) when both
// workdirs of such a pair allow agent tasks, and starts when only one does.
//
// How each kind of overlap is made real here:
// - by path: `/x/app` and `/x/app/sub` (and `/x/app` spelled `/x/./app/`);
// - symlink: fs.symlinkSync makes `/x/link -> /x/app`, the second root is `/x/link/sub`;
// - bind mount: as root, the CLI runs inside a private mount namespace (`unshare -m`, so the mount
//   never leaks to the host and vanishes with the process) after `mount --bind /x/app /x/bound`;
//   the second root is `/x/bound/sub`, which no spelling or symlink ties to `/x/app`: only the
//   device and inode of `/x/bound` (those of `/x/app`) do;
// - case-insensitive spelling: this kernel mounts no vfat, exfat or ext4 casefold, so a real FUSE
//   mount that folds case (test/fixtures/casefold/ci_fuse.py, python3-fusepy) is mounted, again in
//   a private mount namespace; the roots are `ci/app` and `ci/APP/sub`. On a case-sensitive
//   filesystem a differently spelled path is another directory, so there is nothing to find.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { CLI_ARGV, runCli, type CliResult } from "../support/proc.ts";
import { cleanupTempDirs, tempDir } from "../support/temp.ts";

afterAll(cleanupTempDirs);

const q = (s: string) => JSON.stringify(s);
const FIX = "point one of the two at a directory outside the other, or remove one of them";

interface Root {
  alias: string;
  path: string;
  agent?: boolean;
}

/** A TOML config with these workdirs; agent workdirs run the fake runtime. */
function config(dir: string, roots: Root[]): string {
  const anyAgent = roots.some((r) => r.agent);
  const body = roots
    .map((r) =>
      [
        "[[workdirs]]",
        `alias = ${q(r.alias)}`,
        `path = ${q(r.path)}`,
        ...(r.agent ? ["read_only = false", 'agent_mode = "workspace-write"', 'agent_runtimes = ["fake"]'] : []),
        "",
      ].join("\n"),
    )
    .join("\n");
  const server = `[server]\nstate_dir = ${q(path.join(dir, "state"))}\n\n`;
  const agent = anyAgent ? "\n[agent]\nenabled = true\nenable_fake_runtime = true\n" : "";
  const file = path.join(dir, "serverfs.toml");
  fs.writeFileSync(file, server + body + agent);
  return file;
}

function line(stderr: string, prefix: string): string | undefined {
  return stderr.split("\n").find((l) => l.startsWith(prefix));
}

const isRoot = process.platform === "linux" && process.getuid?.() === 0;
const hasUnshare = isRoot && Bun.spawnSync(["unshare", "-m", "true"]).exitCode === 0;
const bindSkip = process.platform !== "linux" ? "needs Linux mount namespaces" : !isRoot ? "needs root to bind-mount" : !hasUnshare ? "unshare -m is refused here" : null;
if (bindSkip) console.warn(`overlap: bind-mount case skipped: ${bindSkip}`);

const PYTHON = "/usr/bin/python3";
const FUSE_FS = path.resolve(import.meta.dir, "../fixtures/casefold/ci_fuse.py");
const fuseSkip =
  bindSkip ??
  (!fs.existsSync("/dev/fuse")
    ? "no /dev/fuse"
    : Bun.spawnSync([PYTHON, "-c", "import fusepy"]).exitCode !== 0
      ? "python3-fusepy is not installed (.ci/run installs it)"
      : null);
if (fuseSkip) console.warn(`overlap: case-insensitive case skipped: ${fuseSkip}`);

/** `serverfs ARGS` inside a private mount namespace, after `setup` (a shell fragment) ran there. */
function cliInNamespace(setup: string, args: string[], teardown = ""): CliResult {
  const script = `set -e\n${setup}\nset +e\n"$0" "$@"\nrc=$?\n${teardown}\nexit $rc\n`;
  const proc = Bun.spawnSync(["unshare", "-m", "--propagation", "private", "sh", "-c", script, ...CLI_ARGV, ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

describe("overlapping workdirs", () => {
  test("nested by path: render-config warns (exit 0, the document still printed), naming both aliases and keys", () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app", "sub"), { recursive: true });
    const file = config(dir, [
      { alias: "app", path: path.join(dir, "app") },
      { alias: "sub", path: path.join(dir, "app", "sub") },
    ]);
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).workdirs.length).toBe(2);
    expect(r.stderr).toBe(
      `serverfs: render-config: WARN: ${file}: workdirs 'app' and 'sub' overlap: 'sub' (workdirs[1].path) is inside 'app' (workdirs[0].path), by path; ` +
        `the same files are then reachable under two aliases and two writer leases; fix: ${FIX}\n`,
    );
  });

  test("the order does not matter, a directory that does not exist yet is judged by its spelling, and a sibling with a common prefix is no overlap", () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app"));
    fs.mkdirSync(path.join(dir, "app2"));
    const file = config(dir, [
      { alias: "deep", path: path.join(dir, "app", "not", "yet") },
      { alias: "app2", path: path.join(dir, "app2") },
      { alias: "app", path: path.join(dir, "app") },
    ]);
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `serverfs: render-config: WARN: ${file}: workdirs 'app' and 'deep' overlap: 'deep' (workdirs[0].path) is inside 'app' (workdirs[2].path), by path; ` +
        `the same files are then reachable under two aliases and two writer leases; fix: ${FIX}\n`,
    );
  });

  test("one directory spelled twice (`/x/./app/`): 'are one directory'; an .env file names its own keys", () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app"));
    const envFile = path.join(dir, "serverfs.env");
    fs.writeFileSync(
      envFile,
      `WORKDIR_01_ALIAS=app\nWORKDIR_01_PATH=${path.join(dir, "app")}\nWORKDIR_02_ALIAS=again\nWORKDIR_02_PATH=${dir}/./app/\n`,
    );
    const r = runCli(["render-config", "--env-file", envFile]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `serverfs: render-config: WARN: ${envFile}: workdirs 'app' and 'again' overlap: 'again' (WORKDIR_02_PATH) and 'app' (WORKDIR_01_PATH) are one directory, by path; ` +
        `the same files are then reachable under two aliases and two writer leases; fix: ${FIX}\n`,
    );
  });

  test("through a symlink: doctor shows a WARN per pair and an OK line when there is none", async () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app", "sub"), { recursive: true });
    fs.mkdirSync(path.join(dir, "other"));
    fs.symlinkSync(path.join(dir, "app"), path.join(dir, "link"));
    const file = config(dir, [
      { alias: "app", path: path.join(dir, "app") },
      { alias: "linked", path: path.join(dir, "link", "sub") },
    ]);
    const r = runCli(["doctor", "--config", file]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n").find((l) => l.startsWith("workdirs app and linked:"))).toBe(
      "workdirs app and linked: WARN -- overlap: 'linked' (workdirs[1].path) is inside 'app' (workdirs[0].path), through a symlink; " +
        `the same files are reachable under two aliases and two writer leases; note: to fix it, ${FIX}`,
    );
    expect(r.stdout).toContain("summary: 0 FAIL, 1 WARN\n");
    // render-config says the same about the symlink
    const rendered = runCli(["render-config", "--config", file]);
    expect(rendered.code).toBe(0);
    expect(rendered.stderr).toContain("'linked' (workdirs[1].path) is inside 'app' (workdirs[0].path), through a symlink;");

    const apart = config(dir, [
      { alias: "app", path: path.join(dir, "app") },
      { alias: "other", path: path.join(dir, "other") },
    ]);
    const clean = runCli(["doctor", "--config", apart]);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain("workdirs overlap: OK -- none: no root is, or lies inside, another\n");
    expect(runCli(["render-config", "--config", apart]).stderr).toBe("");
  });

  test("the Bridge refuses two agent workdirs that overlap: WORKDIR_OVERLAP, exit 1, nothing created; doctor says it would", () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app", "sub"), { recursive: true });
    fs.symlinkSync(path.join(dir, "app"), path.join(dir, "link"));
    const file = config(dir, [
      { alias: "app", path: path.join(dir, "app"), agent: true },
      { alias: "sub", path: path.join(dir, "link", "sub"), agent: true },
    ]);
    const r = runCli(["bridge", "--config", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `serverfs: bridge: WORKDIR_OVERLAP: ${file}: workdirs 'app' and 'sub' both allow agent tasks and overlap: 'sub' (workdirs[1].path) is inside 'app' (workdirs[0].path), through a symlink; ` +
        `two writer leases would guard the same files; fix: ${FIX}, or set workdirs[1].agent_mode = "disabled"\n`,
    );
    expect(fs.existsSync(path.join(dir, "state"))).toBe(false);
    const d = runCli(["doctor", "--config", file]);
    expect(d.stdout).toContain("; both allow agent tasks, so the Bridge refuses to start (WORKDIR_OVERLAP); note:");
  });

  test("the Bridge starts when only one workdir of an overlapping pair allows agent tasks", async () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app", "sub"), { recursive: true });
    const file = config(dir, [
      { alias: "app", path: path.join(dir, "app"), agent: true },
      { alias: "sub", path: path.join(dir, "app", "sub") },
    ]);
    const { spawnBridgeProcess } = await import("../support/bridge-process.ts");
    const { deploymentPaths } = await import("../../src/config/paths.ts");
    const socket = deploymentPaths({ server: { state_dir: path.join(dir, "state") } }).socketPath;
    const bridge = await spawnBridgeProcess(file, socket);
    try {
      const status = await bridge.client.call("bridge.status", {});
      expect(typeof status.pid).toBe("number");
    } finally {
      expect(await bridge.stop()).toBe(0);
    }
  });

  test.skipIf(bindSkip !== null)("through a bind mount (device and inode): render-config warns and the Bridge refuses", () => {
    const dir = tempDir("sfs-overlap-");
    fs.mkdirSync(path.join(dir, "app", "sub"), { recursive: true });
    fs.mkdirSync(path.join(dir, "bound"));
    const plain = config(dir, [
      { alias: "app", path: path.join(dir, "app") },
      { alias: "bound", path: path.join(dir, "bound", "sub") },
    ]);
    const bind = `mount --bind ${q(path.join(dir, "app"))} ${q(path.join(dir, "bound"))}`;
    // Outside the namespace there is no mount: the two are disjoint.
    expect(runCli(["render-config", "--config", plain]).stderr).toBe("");
    const r = cliInNamespace(bind, ["render-config", "--config", plain]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `serverfs: render-config: WARN: ${plain}: workdirs 'app' and 'bound' overlap: 'bound' (workdirs[1].path) is inside 'app' (workdirs[0].path), ` +
        "the same directory by device and inode (a bind mount or another mount of it); " +
        `the same files are then reachable under two aliases and two writer leases; fix: ${FIX}\n`,
    );
    const agents = config(dir, [
      { alias: "app", path: path.join(dir, "app"), agent: true },
      { alias: "bound", path: path.join(dir, "bound"), agent: true },
    ]);
    const b = cliInNamespace(bind, ["bridge", "--config", agents]);
    expect(b.code).toBe(1);
    expect(b.stderr).toBe(
      `serverfs: bridge: WORKDIR_OVERLAP: ${agents}: workdirs 'app' and 'bound' both allow agent tasks and overlap: 'bound' (workdirs[1].path) and 'app' (workdirs[0].path) are one directory, ` +
        "the same directory by device and inode (a bind mount or another mount of it); " +
        `two writer leases would guard the same files; fix: ${FIX}, or set workdirs[1].agent_mode = "disabled"\n`,
    );
    expect(fs.existsSync(path.join(dir, "state"))).toBe(false);
  });

  test.skipIf(fuseSkip !== null)("spelled differently on a case-insensitive filesystem: render-config warns and the Bridge refuses", () => {
    const dir = tempDir("sfs-overlap-");
    const backing = path.join(dir, "backing");
    const ci = path.join(dir, "ci");
    fs.mkdirSync(path.join(backing, "app", "sub"), { recursive: true });
    fs.mkdirSync(ci);
    // The FUSE daemon runs in the namespace; the mount is ready when `ci` is on another device.
    // The loop is bounded by its count, not by time: it ends when the mount appears.
    const mount =
      `${PYTHON} ${q(FUSE_FS)} ${q(backing)} ${q(ci)} 2>/dev/null &\n` +
      `i=0; while [ "$(stat -c %d ${q(ci)})" = "$(stat -c %d ${q(dir)})" ]; do i=$((i+1)); [ $i -lt 400 ] || exit 97; sleep 0.05; done`;
    const unmount = `umount ${q(ci)} || umount -l ${q(ci)}; wait`;
    const plain = config(dir, [
      { alias: "app", path: path.join(ci, "app") },
      { alias: "shout", path: path.join(ci, "APP", "sub") },
    ]);
    const r = cliInNamespace(mount, ["render-config", "--config", plain], unmount);
    expect(r.code).toBe(0);
    const warning = line(r.stderr, "serverfs: render-config: WARN: ");
    expect(warning).toBe(
      `serverfs: render-config: WARN: ${plain}: workdirs 'app' and 'shout' overlap: 'shout' (workdirs[1].path) is inside 'app' (workdirs[0].path), ` +
        `spelled differently on a case-insensitive filesystem; the same files are then reachable under two aliases and two writer leases; fix: ${FIX}`,
    );
    const agents = config(dir, [
      { alias: "app", path: path.join(ci, "app"), agent: true },
      { alias: "shout", path: path.join(ci, "APP"), agent: true },
    ]);
    const b = cliInNamespace(mount, ["bridge", "--config", agents], unmount);
    expect(b.code).toBe(1);
    expect(line(b.stderr, "serverfs: bridge: ")).toBe(
      `serverfs: bridge: WORKDIR_OVERLAP: ${agents}: workdirs 'app' and 'shout' both allow agent tasks and overlap: 'shout' (workdirs[1].path) and 'app' (workdirs[0].path) are one directory, ` +
        `spelled differently on a case-insensitive filesystem; two writer leases would guard the same files; fix: ${FIX}, or set workdirs[1].agent_mode = "disabled"`,
    );
    expect(fs.existsSync(path.join(dir, "state"))).toBe(false);
  });
});
