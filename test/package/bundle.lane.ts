// The MCP Bundles build/package.ts made. Each is unpacked with @anthropic-ai/mcpb's own unpacker
// and its manifest read and validated; the linux bundle is then configured the way a host does
// it (mcpb's getMcpConfigForManifest substitutes a user_config into mcp_config) and its entry is
// run through an MCP client. The macOS and Windows bundles are checked for their manifest and
// for carrying exactly the executable of their platform. Run by .ci/package-lane.sh.
import { afterAll, describe, expect, test } from "bun:test";
import { getMcpConfigForManifest, packExtension, unpackExtension } from "@anthropic-ai/mcpb";
import { unzipSync } from "fflate";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { manifestProblems } from "../../build/package/mcpb.ts";
import { connectServe } from "../support/mcp.ts";
import { VERSION, packageDir } from "./support.ts";

const PKG = packageDir();
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-mcpb-")));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const BUNDLES = [
  { target: "darwin-arm64", platform: "darwin", entry: "server/serverfs", exe: "serverfs-darwin-arm64" },
  { target: "darwin-x64", platform: "darwin", entry: "server/serverfs", exe: "serverfs-darwin-x64" },
  { target: "windows-x64", platform: "win32", entry: "server/serverfs.exe", exe: "serverfs-windows-x64.exe" },
  { target: "linux-x64", platform: "linux", entry: "server/serverfs", exe: "serverfs-linux-x64" },
] as const;

async function unpack(target: string): Promise<{ dir: string; manifest: Record<string, any> }> {
  const dir = path.join(base, target);
  if (!fs.existsSync(dir)) expect(await unpackExtension({ mcpbPath: path.join(PKG, `serverfs-${target}.mcpb`), outputDir: dir, silent: true })).toBe(true);
  return { dir, manifest: JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")) };
}

describe("the MCP Bundles", () => {
  for (const b of BUNDLES) {
    test(`${b.target}: a valid 0.3 binary manifest for ${b.platform}, carrying that platform's executable`, async () => {
      const { dir, manifest } = await unpack(b.target);
      expect(manifestProblems(manifest)).toEqual([]);
      expect(manifest.manifest_version).toBe("0.3");
      expect(manifest.version).toBe(VERSION);
      expect(manifest.server.type).toBe("binary");
      expect(manifest.server.entry_point).toBe(b.entry);
      expect(manifest.server.mcp_config.command).toBe(`\${__dirname}/${b.entry}`);
      expect(manifest.compatibility.platforms).toEqual([b.platform]);
      for (const key of ["read_only_folders", "read_write_folders"]) {
        expect(manifest.user_config[key]).toMatchObject({ type: "directory", multiple: true });
      }
      expect(manifest.user_config.config_file).toMatchObject({ type: "file" });
      const carried = fs.readFileSync(path.join(dir, b.entry));
      expect(Buffer.compare(carried, fs.readFileSync(path.join(PKG, b.exe)))).toBe(0);
      const magic = carried.subarray(0, 4).toString("hex");
      // Mach-O 64-bit (cffaedfe), PE (MZ), ELF (7f454c46)
      expect(b.platform === "darwin" ? magic : b.platform === "win32" ? magic.slice(0, 4) : magic).toBe(
        b.platform === "darwin" ? "cffaedfe" : b.platform === "win32" ? "4d5a" : "7f454c46",
      );
      if (b.platform !== "win32") expect(fs.statSync(path.join(dir, b.entry)).mode & 0o777).toBe(0o755);
      expect(fs.readdirSync(dir).sort()).toEqual(["manifest.json", "server"]);
    }, 120_000);
  }

  test("linux-x64: the user's folders, substituted as a host does, become workdirs named after them", async () => {
    const { dir, manifest } = await unpack("linux-x64");
    for (const d of ["a/Docs", "b/docs", "work/app"]) fs.mkdirSync(path.join(base, "picked", d), { recursive: true });
    fs.writeFileSync(path.join(base, "picked/a/Docs/readme.md"), "picked\n");
    const config = await getMcpConfigForManifest({
      manifest: manifest as never,
      extensionPath: dir,
      systemDirs: { HOME: base, DESKTOP: base, DOCUMENTS: base, DOWNLOADS: base },
      userConfig: {
        read_only_folders: [path.join(base, "picked/a/Docs"), path.join(base, "picked/b/docs")],
        read_write_folders: [path.join(base, "picked/work/app")],
      },
      pathSeparator: "/",
    });
    expect(config?.command).toBe(path.join(dir, "server/serverfs"));
    const serve = await connectServe({ spawn: { command: config!.command, args: config!.args ?? [] } });
    try {
      const listed = (await serve.call("list_workdirs")).structuredContent as { workdirs: { alias: string; access: string }[] };
      expect(listed.workdirs.map((w) => [w.alias, w.access])).toEqual([
        ["Docs", "read-only"],
        ["docs-2", "read-only"],
        ["app", "read-write"],
      ]);
      const read = await serve.call("read_text_file", { workdir: "Docs", path: "readme.md" });
      expect(JSON.stringify(read.structuredContent)).toContain("picked");
    } finally {
      await serve.close();
    }
  }, 60_000);

  test("linux-x64: a picked configuration file instead of folders", async () => {
    const { dir, manifest } = await unpack("linux-x64");
    fs.mkdirSync(path.join(base, "from-config"), { recursive: true });
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "configured"\npath = ${JSON.stringify(path.join(base, "from-config"))}\n`);
    const config = await getMcpConfigForManifest({
      manifest: manifest as never,
      extensionPath: dir,
      systemDirs: { HOME: base },
      userConfig: { config_file: [toml] },
      pathSeparator: "/",
    });
    const serve = await connectServe({ spawn: { command: config!.command, args: config!.args ?? [] } });
    try {
      const listed = (await serve.call("list_workdirs")).structuredContent as { workdirs: { alias: string }[] };
      expect(listed.workdirs.map((w) => w.alias)).toEqual(["configured"]);
    } finally {
      await serve.close();
    }
  }, 60_000);

  test("linux-x64: nothing picked is a usage error naming what to give, not a hang", async () => {
    const { dir, manifest } = await unpack("linux-x64");
    const config = await getMcpConfigForManifest({ manifest: manifest as never, extensionPath: dir, systemDirs: { HOME: base }, userConfig: {}, pathSeparator: "/" });
    expect(config!.args).toEqual(["serve", "--config", "--workdir-ro", "--workdir-rw"]);
    const r = Bun.spawnSync([config!.command, ...config!.args!], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(2);
    expect(r.stdout.toString()).toBe("");
    expect(r.stderr.toString()).toContain("USAGE_ERROR: serve needs --config FILE");
  }, 60_000);

  test("linux-x64: our archive holds exactly what mcpb pack makes of the same files", async () => {
    const { dir } = await unpack("linux-x64");
    const repacked = path.join(base, "mcpb-pack.mcpb");
    expect(await packExtension({ extensionPath: dir, outputPath: repacked, silent: true })).toBe(true);
    const ours = unzipSync(new Uint8Array(fs.readFileSync(path.join(PKG, "serverfs-linux-x64.mcpb"))));
    const theirs = unzipSync(new Uint8Array(fs.readFileSync(repacked)));
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
    for (const name of Object.keys(ours)) expect(Buffer.compare(Buffer.from(ours[name]!), Buffer.from(theirs[name]!))).toBe(0);
  }, 300_000);
});
