// install.ps1 against a fake release: a directory holding serverfs-windows-x64.exe and its
// SHA256SUMS, served by Bun.serve on 127.0.0.1 only. Run by Windows PowerShell 5.1, the one every
// Windows has. The script must install the file into -Prefix byte for byte, and refuse a file
// whose checksum does not match, or a release without SHA256SUMS, with nothing installed. It skips
// elsewhere (it needs Windows PowerShell; Wine has none): the windows workflow runs it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "../support/proc.ts";
import { serveReleaseDirectory } from "./support.ts";

const SCRIPT = path.join(REPO, "install.ps1");
const ASSET = "serverfs-windows-x64.exe";
const onWindows = process.platform === "win32";
/** Not a program: the script never runs what it downloads, and these bytes could not run anyway. */
const BODY = Buffer.from(`not an executable: ${ASSET}\r\n`.repeat(64));

let base = "";
let server: ReturnType<typeof Bun.serve> | undefined;
const requested: string[] = [];

function release(dir: string, options: { tamper?: boolean; sums?: boolean } = {}): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, ASSET), BODY);
  const digest = createHash("sha256").update(options.tamper ? Buffer.concat([BODY, Buffer.from("x")]) : BODY).digest("hex");
  if (options.sums !== false) fs.writeFileSync(path.join(dir, "SHA256SUMS"), `${digest}  ${ASSET}\n`);
}

async function install(releaseName: string, prefix: string): Promise<{ code: number; stderr: string }> {
  const url = `http://127.0.0.1:${server!.port}/${releaseName}`;
  const proc = Bun.spawn(["powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", SCRIPT, "-BaseUrl", url, "-Prefix", prefix], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stderr };
}

beforeAll(() => {
  if (!onWindows) return;
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-install-ps1-")));
  const root = path.join(base, "releases");
  release(path.join(root, "good"));
  release(path.join(root, "tampered"), { tamper: true });
  release(path.join(root, "nosums"), { sums: false });
  server = serveReleaseDirectory(root, requested);
});

afterAll(() => {
  server?.stop(true);
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!onWindows)("install.ps1 (Windows PowerShell)", () => {
  test("installs serverfs.exe, checked against SHA256SUMS, into -Prefix", async () => {
    const prefix = path.join(base, "good-prefix");
    const r = await install("good", prefix);
    expect(r.stderr).toContain(`installed ${path.join(prefix, "serverfs.exe")}`);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(prefix, "serverfs.exe"))).toEqual(BODY);
    // No staged copy is left beside it.
    expect(fs.readdirSync(prefix)).toEqual(["serverfs.exe"]);
    expect(requested).toContain(`good/${ASSET}`);
    expect(requested).toContain("good/SHA256SUMS");
    expect(r.stderr).toContain(`${prefix} is not on your PATH`);
  });

  test("a file that does not match SHA256SUMS is refused and nothing is installed", async () => {
    const prefix = path.join(base, "tampered-prefix");
    const r = await install("tampered", prefix);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`serverfs install: checksum mismatch for ${ASSET}`);
    expect(r.stderr).toContain("nothing was installed");
    expect(fs.existsSync(prefix)).toBe(false);
  });

  test("a release without SHA256SUMS is refused and nothing is installed", async () => {
    const prefix = path.join(base, "nosums-prefix");
    const r = await install("nosums", prefix);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("could not download");
    expect(r.stderr).toContain("/nosums/SHA256SUMS");
    expect(fs.existsSync(prefix)).toBe(false);
  });
});
