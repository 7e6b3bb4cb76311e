// The npm packages build/package.ts made, installed offline into a temporary prefix the way npm
// users get them: the launcher runs the platform package's executable, speaks MCP through it,
// passes SIGTERM on, mirrors the executable's exit (or the signal that ended it), and says what
// is wrong, with a code, when the platform package is missing. Run by .ci/package-lane.sh.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { connectServe } from "../support/mcp.ts";
import { FILE_READ_TOOLS } from "../support/tool-names.ts";
import { VERSION, childPids, packageDir, readRest, readUntil } from "./support.ts";

const PKG = packageDir();
const target = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
const mainTarball = path.join(PKG, `serverfs-${VERSION}.tgz`);
const platformTarball = path.join(PKG, `serverfs-${target}-${VERSION}.tgz`);
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-npm-")));
const prefix = path.join(base, "prefix");
const launcher = path.join(prefix, "node_modules", ".bin", "serverfs");
const docs = path.join(base, "docs");

function npm(args: string[], cwd: string) {
  const r = Bun.spawnSync(["npm", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, npm_config_cache: path.join(base, "npm-cache"), npm_config_update_notifier: "false" },
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

beforeAll(() => {
  fs.mkdirSync(prefix);
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, "notes.md"), "hello from the tarball\n");
  const r = npm(["install", "--offline", "--no-audit", "--no-fund", "--prefix", prefix, mainTarball, platformTarball], base);
  if (r.code !== 0) throw new Error(`npm install failed: ${r.stderr}`);
}, 300_000);

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("the serverfs npm package", () => {
  test("installs the launcher as the serverfs command and the platform package beside it", () => {
    expect(fs.existsSync(path.join(prefix, "node_modules", "serverfs", "bin", "serverfs.js"))).toBe(true);
    const exe = path.join(prefix, "node_modules", `serverfs-${target}`, "bin", "serverfs");
    expect(fs.statSync(exe).mode & 0o111).not.toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(prefix, "node_modules", "serverfs", "package.json"), "utf8"));
    expect(manifest.bin).toEqual({ serverfs: "bin/serverfs.js" });
    expect(Object.keys(manifest.optionalDependencies).sort()).toEqual(
      ["serverfs-darwin-arm64", "serverfs-darwin-x64", "serverfs-linux-arm64", "serverfs-linux-x64", "serverfs-windows-x64"],
    );
    expect(manifest.scripts).toBeUndefined();
  });

  test("npx --offline serverfs --version prints the version and nothing else", () => {
    const r = Bun.spawnSync(["npx", "--offline", "serverfs", "--version"], { cwd: prefix, stdout: "pipe", stderr: "pipe" });
    expect(r.stdout.toString()).toBe(`serverfs ${VERSION}\n`);
    expect(r.exitCode).toBe(0);
  }, 60_000);

  test("an MCP host gets initialize and tools/list through the launcher", async () => {
    const serve = await connectServe({ spawn: { command: launcher, args: ["serve", "--workdir", `docs=${docs}`] } });
    try {
      expect(serve.client.getServerVersion()?.name).toBe("serverfs");
      expect(serve.client.getServerVersion()?.version).toBe(VERSION);
      const tools = (await serve.client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual([...FILE_READ_TOOLS]);
      const read = await serve.call("read_text_file", { workdir: "docs", path: "notes.md" });
      expect(JSON.stringify(read.structuredContent)).toContain("hello from the tarball");
    } finally {
      await serve.close();
    }
  }, 60_000);

  test("SIGTERM to the launcher reaches the executable, which shuts down; the launcher exits as it did", async () => {
    // The executable's own answer to SIGTERM, started directly, to compare with.
    const exe = path.join(prefix, "node_modules", `serverfs-${target}`, "bin", "serverfs");
    const direct = Bun.spawn([exe, "serve", "--workdir", `docs=${docs}`], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    await initialized(direct);
    direct.kill("SIGTERM");
    const directCode = await direct.exited;

    const proc = Bun.spawn([launcher, "serve", "--workdir", `docs=${docs}`], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const out = await initialized(proc);
    const children = childPids(proc.pid);
    expect(children.length).toBe(1);
    const child = children[0]!;
    expect(fs.readlinkSync(`/proc/${child}/exe`)).toBe(fs.realpathSync(exe));
    proc.kill("SIGTERM");
    const code = await proc.exited;
    const err = await new Response(proc.stderr).text();
    expect(err).toContain('"event":"shutdown","reason":"SIGTERM"');
    expect(fs.existsSync(`/proc/${child}`)).toBe(false);
    expect(proc.signalCode).toBe(direct.signalCode);
    expect(code).toBe(directCode);
    // stdout carried the executable's MCP answer and nothing from the launcher.
    expect(await readRest(proc.stdout)).toBe("");
    expect(out.text.trim().split("\n").map((l) => JSON.parse(l).id)).toEqual([1]);
  }, 60_000);

  test("when the executable dies of a signal, the launcher dies of the same signal", async () => {
    const proc = Bun.spawn([launcher, "serve", "--workdir", `docs=${docs}`], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    await initialized(proc);
    const [child] = childPids(proc.pid);
    process.kill(child!, "SIGKILL");
    await proc.exited;
    expect(proc.signalCode).toBe("SIGKILL");
  }, 60_000);

  test("without the platform package: a coded error on stderr, exit 1, nothing on stdout", () => {
    const bare = path.join(base, "bare");
    fs.mkdirSync(bare);
    const r = npm(["install", "--offline", "--no-audit", "--no-fund", "--omit=optional", "--prefix", bare, mainTarball], base);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(bare, "node_modules", `serverfs-${target}`))).toBe(false);
    const run = Bun.spawnSync([path.join(bare, "node_modules", ".bin", "serverfs"), "--version"], { stdout: "pipe", stderr: "pipe" });
    expect(run.exitCode).toBe(1);
    expect(run.stdout.toString()).toBe("");
    expect(run.stderr.toString()).toStartWith(`serverfs: PLATFORM_PACKAGE_MISSING: the package serverfs-${target}, which holds the serverfs executable for this machine, is not installed;`);
  }, 120_000);
});

/**
 * Sends initialize and reads stdout up to its answer: serve installs its signal handlers before
 * it reads the first frame, so after this a SIGTERM meets them (its startup log line comes earlier).
 */
async function initialized(p: { stdin: import("bun").FileSink; stdout: ReadableStream<Uint8Array> }): Promise<{ text: string }> {
  p.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lane", version: "0" } } })}\n`,
  );
  await p.stdin.flush();
  const out = { text: "" };
  await readUntil(p.stdout, '"serverInfo"', out);
  if (!out.text.endsWith("\n")) await readUntil(p.stdout, "\n", out);
  return out;
}
