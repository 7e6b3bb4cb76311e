// A second NTFS volume (a VHD the Windows workflow attaches with diskpart) mounted both on a drive
// letter and on a folder inside a workdir, served by the compiled `serverfs serve` over MCP stdio.
// A volume mount point carries the same reparse tag as a junction (IO_REPARSE_TAG_MOUNT_POINT,
// a name-surrogate), so the Windows backend (platform/fs/resolve-windows.ts) never walks through
// it: as a final component it is listed as a `symlink` and refused SYMLINK_NOT_ALLOWED, on the way
// to another name it is REPARSE_POINT_NOT_ALLOWED, and no walk leaves the root's volume, so a
// move can never reach the other volume. Needs the environment the workflow sets:
//   SERVERFS_VHD_DRIVE   the VHD's drive letter ("V:")
//   SERVERFS_VHD_MOUNT   the empty folder the same volume is mounted on; its parent is the workdir
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { errorCode, ok } from "../mcp/helpers.ts";
import { callTool, connectWindowsServe, removeTree } from "../support/windows-serve.ts";

const drive = process.env.SERVERFS_VHD_DRIVE ?? "";
const mount = process.env.SERVERFS_VHD_MOUNT ?? "";
const skip =
  process.platform !== "win32"
    ? "needs Windows: NTFS volumes and mount points"
    : drive === "" || mount === ""
      ? "needs SERVERFS_VHD_DRIVE and SERVERFS_VHD_MOUNT (a second volume; .github/workflows/windows.yml attaches one from a VHD)"
      : null;
const NO_REVISION = "v1:0000000000000000";

interface Node {
  name: string;
  type: string;
  children?: Node[];
}

describe.skipIf(skip !== null)(`a second volume inside a workdir (${skip ?? "real Windows, VHD attached"})`, () => {
  const workdir = mount === "" ? "" : path.dirname(mount);
  const mountName = path.basename(mount);
  const onVhd = path.join(`${drive}\\`, `serverfs-${process.pid}`);
  let home = "";
  let client: Client;
  const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> => callTool(client, name, args);

  beforeAll(async () => {
    // The folder is a mount point of the VHD's volume (the workflow's diskpart `assign mount=`).
    const query = spawnSync("fsutil.exe", ["reparsepoint", "query", mount], { encoding: "utf8" });
    expect(query.stdout).toContain("0xa0000003");
    // ... of the very volume on the drive letter.
    const volumeOf = (p: string) => spawnSync("mountvol.exe", [p, "/L"], { encoding: "utf8" }).stdout.trim();
    expect(volumeOf(`${mount}\\`)).toMatch(/^\\\\\?\\Volume\{[0-9a-f-]{36}\}\\$/i);
    expect(volumeOf(`${mount}\\`)).toBe(volumeOf(`${drive}\\`));
    fs.mkdirSync(onVhd);
    fs.writeFileSync(path.join(onVhd, "beyond.txt"), "needle from the second volume\n");
    fs.writeFileSync(path.join(workdir, "here.txt"), "on the first volume\n");
    // The same file, seen through the mount point by anyone who follows it.
    expect(fs.readFileSync(path.join(mount, path.basename(onVhd), "beyond.txt"), "utf8")).toBe("needle from the second volume\n");
    home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-vhd-home-")));
    const config = path.join(home, "serverfs.toml");
    fs.writeFileSync(
      config,
      ["[[workdirs]]", 'alias = "w"', `path = ${JSON.stringify(workdir)}`, "read_only = false", "[[workdirs]]", 'alias = "v"', `path = ${JSON.stringify(onVhd)}`, "read_only = false", ""].join(
        "\n",
      ),
    );
    client = await connectWindowsServe("windows-second-volume", ["--config", config], home, home);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    fs.rmSync(path.join(workdir, "here.txt"), { force: true });
    if (onVhd !== "") removeTree(onVhd);
    if (home !== "") removeTree(home);
  });

  // Defence: every component is opened with FILE_OPEN_REPARSE_POINT and a name-surrogate tag
  // (IO_REPARSE_TAG_MOUNT_POINT included) is refused or typed as a link. Without it the walk would
  // follow the mount point onto the VHD: the read through it would return the needle, the listing
  // would show its files, find and search would report them, and the mount point would list as a
  // directory.
  test("the mount point is listed as a symlink and never entered: read, list, tree, find and search stay on the workdir's volume", async () => {
    const through = `${mountName}\\${path.basename(onVhd)}\\beyond.txt`;
    const listed = ok<{ entries: Array<{ name: string; type: string }> }>(await call("list_directory", { workdir: "w" })).entries;
    expect(listed.find((e) => e.name === mountName)).toMatchObject({ name: mountName, type: "symlink" });
    expect(errorCode(await call("read_text_file", { workdir: "w", path: through }))).toBe("REPARSE_POINT_NOT_ALLOWED");
    expect(errorCode(await call("stat_file", { workdir: "w", path: through }))).toBe("REPARSE_POINT_NOT_ALLOWED");
    expect(errorCode(await call("list_directory", { workdir: "w", path: mountName }))).toBe("REPARSE_POINT_NOT_ALLOWED");
    expect(errorCode(await call("read_text_file", { workdir: "w", path: mountName }))).toBe("SYMLINK_NOT_ALLOWED");
    const tree = ok<{ tree: Node }>(await call("directory_tree", { workdir: "w", max_depth: 10 })).tree;
    expect(tree.children!.find((c) => c.name === mountName)).toEqual({ name: mountName, type: "symlink" });
    expect(JSON.stringify(tree)).not.toContain("beyond.txt");
    const found = ok<{ matches: Array<{ path: string }> }>(await call("find_files", { workdir: "w", pattern: "*.txt" }));
    expect(found.matches.map((m) => m.path)).toEqual(["here.txt"]);
    const hits = ok<{ matches: Array<{ path: string }> }>(await call("search_text", { workdir: "w", query: "needle" }));
    expect(hits.matches).toEqual([]);
    // The same file is served where the volume is a workdir of its own.
    expect(ok<{ content: string }>(await call("read_text_file", { workdir: "v", path: "beyond.txt" })).content).toBe("needle from the second volume\n");
  });

  // Defence: the same refusal, before any rename: a move's source and destination are both walked
  // without following the mount point, so the rename never spans volumes. Without it, the rename
  // of here.txt into the mount point would reach NtSetInformationFile with a directory on the VHD
  // and come back STATUS_NOT_SAME_DEVICE (CROSS_DEVICE_MOVE), not REPARSE_POINT_NOT_ALLOWED, and a
  // backend that copied instead would leave the bytes on the VHD and none on C:.
  test("a move across the volumes, either way through the mount point, is REPARSE_POINT_NOT_ALLOWED and every byte stays where it was", async () => {
    const vhdDir = path.basename(onVhd);
    const here = ok<{ revision: string }>(await call("stat_file", { workdir: "w", path: "here.txt" })).revision;
    expect(errorCode(await call("move_file", { workdir: "w", source: "here.txt", destination: `${mountName}\\${vhdDir}\\here.txt`, expected_revision: here }))).toBe(
      "REPARSE_POINT_NOT_ALLOWED",
    );
    expect(
      errorCode(await call("move_file", { workdir: "w", source: `${mountName}\\${vhdDir}\\beyond.txt`, destination: "beyond.txt", expected_revision: NO_REVISION })),
    ).toBe("REPARSE_POINT_NOT_ALLOWED");
    // The mount point itself is a name-surrogate, moved no more than a symlink.
    expect(errorCode(await call("move_file", { workdir: "w", source: mountName, destination: `${mountName}-moved`, expected_revision: NO_REVISION }))).toBe(
      "SYMLINK_NOT_ALLOWED",
    );
    // C: side
    expect(fs.readFileSync(path.join(workdir, "here.txt"), "utf8")).toBe("on the first volume\n");
    expect(fs.existsSync(path.join(workdir, "beyond.txt"))).toBe(false);
    expect(fs.existsSync(path.join(workdir, `${mountName}-moved`))).toBe(false);
    expect(spawnSync("fsutil.exe", ["reparsepoint", "query", mount], { encoding: "utf8" }).stdout).toContain("0xa0000003");
    // VHD side
    expect(fs.readdirSync(onVhd)).toEqual(["beyond.txt"]);
    expect(fs.readFileSync(path.join(onVhd, "beyond.txt"), "utf8")).toBe("needle from the second volume\n");
    // Within the VHD's own workdir a move is an ordinary rename on that volume.
    const beyond = ok<{ revision: string }>(await call("stat_file", { workdir: "v", path: "beyond.txt" })).revision;
    expect(ok<{ moved: boolean }>(await call("move_file", { workdir: "v", source: "beyond.txt", destination: "moved.txt", expected_revision: beyond })).moved).toBe(true);
    expect(fs.readdirSync(onVhd)).toEqual(["moved.txt"]);
    expect(fs.readFileSync(path.join(onVhd, "moved.txt"), "utf8")).toBe("needle from the second volume\n");
  });
});
