// install.sh against a fake release: a directory of per-platform files and their SHA256SUMS,
// served by Bun.serve on 127.0.0.1 only. The script must pick this machine's file, install it
// executable into --prefix, and refuse a file whose checksum does not match with nothing
// installed. Each fake "executable" is a shell script that would leave a marker file if anything
// ran it: the marker must never appear.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "../support/proc.ts";
import { serveReleaseDirectory } from "./support.ts";

const SCRIPT = path.join(REPO, "install.sh");
const ASSETS = ["serverfs-linux-x64", "serverfs-linux-arm64", "serverfs-darwin-arm64", "serverfs-darwin-x64", "serverfs-windows-x64.exe"];
const onLinuxOrMac = process.platform === "linux" || process.platform === "darwin";
const arch = process.arch === "arm64" ? "arm64" : "x64";
const expectedAsset = `serverfs-${process.platform}-${arch}`;

let base = "";
let marker = "";
let server: ReturnType<typeof Bun.serve> | undefined;
const requested: string[] = [];

function fakeExecutable(name: string): string {
  return `#!/bin/sh\n# ${name}\necho ran > ${JSON.stringify(marker)}\n`;
}

/** A release directory: every asset, and SHA256SUMS (optionally lying about one asset). */
function release(dir: string, tamper?: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  for (const name of ASSETS) {
    const body = fakeExecutable(name);
    fs.writeFileSync(path.join(dir, name), body);
    const digest = createHash("sha256").update(name === tamper ? `${body}tampered` : body).digest("hex");
    lines.push(`${digest}  ${name}\n`);
  }
  fs.writeFileSync(path.join(dir, "SHA256SUMS"), lines.join(""));
}

async function install(releaseName: string, prefix: string): Promise<{ code: number; stderr: string }> {
  const url = `http://127.0.0.1:${server!.port}/${releaseName}`;
  const proc = Bun.spawn(["sh", SCRIPT, "--base-url", url, "--prefix", prefix], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: path.join(base, "home") },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(stdout).toBe("");
  return { code, stderr };
}

beforeAll(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-install-")));
  marker = path.join(base, "ran-marker");
  fs.mkdirSync(path.join(base, "home"));
  release(path.join(base, "releases/good"));
  release(path.join(base, "releases/tampered"), expectedAsset);
  const root = path.join(base, "releases");
  server = serveReleaseDirectory(root, requested);
});

afterAll(() => {
  server?.stop(true);
  fs.rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!onLinuxOrMac)("install.sh", () => {
  test("installs this machine's executable, checked against SHA256SUMS, into --prefix", async () => {
    const prefix = path.join(base, "good-prefix", "bin");
    const r = await install("good", prefix);
    expect(r.code).toBe(0);
    const installed = path.join(prefix, "serverfs");
    expect(fs.readFileSync(installed, "utf8")).toBe(fakeExecutable(expectedAsset));
    expect(fs.statSync(installed).mode & 0o777).toBe(0o755);
    expect(fs.readdirSync(prefix)).toEqual(["serverfs"]);
    expect(requested).toContain(`good/${expectedAsset}`);
    expect(requested).toContain("good/SHA256SUMS");
    // The prefix is not on the test's PATH: the script says how to put it there.
    expect(r.stderr).toContain(`${prefix} is not on your PATH`);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test("a file that does not match SHA256SUMS is refused and nothing is installed", async () => {
    const prefix = path.join(base, "tampered-prefix", "bin");
    const r = await install("tampered", prefix);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`serverfs install: checksum mismatch for ${expectedAsset}`);
    expect(r.stderr).toContain("nothing was installed");
    expect(fs.existsSync(prefix)).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test("a release without SHA256SUMS is refused before anything is downloaded into place", async () => {
    fs.mkdirSync(path.join(base, "releases/nosums"), { recursive: true });
    fs.writeFileSync(path.join(base, "releases/nosums", expectedAsset), fakeExecutable(expectedAsset));
    const prefix = path.join(base, "nosums-prefix", "bin");
    const r = await install("nosums", prefix);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("could not download");
    expect(r.stderr).toContain("/nosums/SHA256SUMS");
    expect(fs.existsSync(prefix)).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test("an unknown argument is refused", async () => {
    const proc = Bun.spawnSync(["sh", SCRIPT, "--bogus"], { stdout: "pipe", stderr: "pipe" });
    expect(proc.exitCode).toBe(1);
    expect(proc.stderr.toString()).toBe("serverfs install: unknown argument '--bogus' (see --help)\n");
  });
});
