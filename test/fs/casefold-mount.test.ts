// Real mounts. A case-insensitive filesystem is mounted (a FUSE passthrough that folds case like
// vfat or an ext4 casefold directory: this kernel has neither vfat, exfat, ntfs nor
// CONFIG_UNICODE, so those cannot be mounted here), and the real MCP server over the real file
// service refuses `ID_RSA`, `Secrets/x` and `.SERVERFS-TMP-x` there and hides them from list, find
// and search, while a tmpfs and a loop-mounted ext4 are detected case-sensitive and keep serving
// `ID_RSA`. Nothing in a backing tree changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { detectCaseSensitivity } from "../../platform/fs/case-sensitivity.ts";
import { ext4CasefoldFeature } from "../../platform/fs/case-linux.ts";
import { caseCheck } from "../../src/doctor/checks/workdir.ts";
import { connect, errorCode, makeRegistry, ok, type Harness } from "../mcp/helpers.ts";
import { tempDir } from "../support/temp.ts";

const FUSE_FS = path.resolve(import.meta.dir, "../fixtures/casefold/ci_fuse.py");
const PYTHON = "/usr/bin/python3";

function run(argv: string[]): { ok: boolean; err: string } {
  const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return { ok: r.exitCode === 0, err: `${r.stderr.toString().trim()}` };
}

/** Why this file cannot run here, or null. */
function whyNot(): string | null {
  if (process.platform !== "linux") return "needs Linux mounts (macOS: test/platform/case-sensitivity.test.ts)";
  if (process.getuid?.() !== 0) return "needs root to mount";
  if (!fs.existsSync("/dev/fuse")) return "no /dev/fuse";
  if (!run([PYTHON, "-c", "import fusepy"]).ok) return "python3-fusepy is not installed (.ci/run installs it)";
  return null;
}
const skip = whyNot();
if (skip !== null) console.warn(`casefold-mount: skipped: ${skip}`);

type Snapshot = Record<string, string>;
function snapshot(dir: string, rel = ""): Snapshot {
  const out: Snapshot = {};
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const r = rel === "" ? name : `${rel}/${name}`;
    const st = fs.lstatSync(path.join(dir, r));
    if (st.isDirectory()) {
      out[r] = `dir ${st.mode} ${st.mtimeMs}`;
      Object.assign(out, snapshot(dir, r));
    } else out[r] = `file ${st.mode} ${st.mtimeMs} ${fs.readFileSync(path.join(dir, r)).toString("base64")}`;
  }
  return out;
}

const base = tempDir("serverfs-casefold-");
const backing = path.join(base, "backing");
const ciMount = path.join(base, "ci");
const tmpfsMount = path.join(base, "tmpfs");
const mounted: string[] = [];
let fuse: ReturnType<typeof Bun.spawn> | null = null;
let h: Harness | null = null;

async function waitMounted(dir: string, parent: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (fs.statSync(dir).dev !== fs.statSync(parent).dev) return true;
    await Bun.sleep(50);
  }
  return false;
}

beforeAll(async () => {
  if (skip !== null) return;
  fs.mkdirSync(path.join(backing, "Secrets"), { recursive: true });
  fs.mkdirSync(path.join(backing, "sub"));
  fs.writeFileSync(path.join(backing, "id_rsa"), "PRIVATE KEY needle\n");
  fs.writeFileSync(path.join(backing, "Secrets", "x"), "secret needle\n");
  fs.writeFileSync(path.join(backing, "readme.md"), "public needle\n");
  fs.writeFileSync(path.join(backing, "sub", "cert.PEM"), "pem needle\n");
  fs.mkdirSync(ciMount);
  fs.mkdirSync(tmpfsMount);
  fuse = Bun.spawn([PYTHON, FUSE_FS, backing, ciMount], { stdout: "ignore", stderr: "pipe" });
  if (!(await waitMounted(ciMount, base))) throw new Error("the case-insensitive FUSE mount did not appear");
  mounted.push(ciMount);
  const t = run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", tmpfsMount]);
  if (!t.ok) throw new Error(`tmpfs mount failed: ${t.err}`);
  mounted.push(tmpfsMount);
  fs.writeFileSync(path.join(tmpfsMount, "ID_RSA"), "upper-case name on a case-sensitive fs\n");
  h = await connect(
    makeRegistry([
      { alias: "ci", path: ciMount, read_only: false, extra_deny_globs: ["secrets/**"] },
      { alias: "cs", path: tmpfsMount, read_only: false, extra_deny_globs: ["secrets/**"] },
    ]),
  );
});

afterAll(async () => {
  try {
    await h?.close();
  } finally {
    for (const m of mounted.reverse()) if (!run(["umount", m]).ok) run(["umount", "-l", m]);
    if (fuse !== null) {
      fuse.kill();
      await fuse.exited;
    }
    fs.rmSync(base, { recursive: true, force: true });
  }
});

describe.skipIf(skip !== null)("a real case-insensitive mount", () => {
  test("detection: insensitive on the mount, sensitive on its ext4 backing and on tmpfs; doctor says why", () => {
    expect(detectCaseSensitivity(ciMount)).toEqual({
      insensitive: true,
      basis: "detected-insensitive",
      reason: "a case-swapped lookup in the root found the same entry",
    });
    expect(detectCaseSensitivity(backing).basis).toBe("detected-sensitive");
    const t = detectCaseSensitivity(tmpfsMount);
    expect(t.basis).toBe("detected-sensitive");
    expect(t.reason).toStartWith("tmpfs");
    const w = makeRegistry([{ alias: "ci", path: ciMount }]).workdirs[0]!;
    expect(caseCheck(w)).toEqual({
      id: "workdir.ci.names",
      label: "workdir ci names",
      status: "OK",
      detail: "matched case-insensitively (detected: a case-swapped lookup in the root found the same entry)",
    });
  });

  test("direct access in any spelling: DENIED_PATH / RESERVED_PATH / HIDDEN_PATH_NOT_ALLOWED, nothing changes", async () => {
    const before = snapshot(backing);
    const cases: [string, Record<string, unknown>, string][] = [
      ["read_text_file", { path: "ID_RSA" }, "DENIED_PATH"],
      ["read_text_file", { path: "id_rsa" }, "DENIED_PATH"],
      ["stat_file", { path: "Id_Rsa" }, "DENIED_PATH"],
      ["read_text_file", { path: "Secrets/x" }, "DENIED_PATH"],
      ["read_text_file", { path: "SECRETS/x" }, "DENIED_PATH"],
      ["list_directory", { path: "secrets" }, "DENIED_PATH"],
      ["read_text_file", { path: "sub/CERT.pem" }, "DENIED_PATH"],
      ["create_text_file", { path: "ID_RSA", content: "overwrite?" }, "DENIED_PATH"],
      ["create_text_file", { path: ".SERVERFS-TMP-x", content: "x" }, "RESERVED_PATH"],
      ["create_directory", { path: ".Serverfs-Disabled" }, "RESERVED_PATH"],
      ["create_text_file", { path: ".ENV", content: "x" }, "HIDDEN_PATH_NOT_ALLOWED"],
    ];
    for (const [tool, args, code] of cases) {
      expect([tool, args, errorCode(await h!.call(tool, { workdir: "ci", ...args }))]).toEqual([tool, args, code]);
    }
    expect(snapshot(backing)).toEqual(before);
  });

  test("invisible to list, find and search; public files still served", async () => {
    const before = snapshot(backing);
    const list = ok<{ entries: Array<{ name: string }> }>(await h!.call("list_directory", { workdir: "ci" }));
    expect(list.entries.map((e) => e.name).sort()).toEqual(["readme.md", "sub"]);
    const sub = ok<{ entries: Array<{ name: string }> }>(await h!.call("list_directory", { workdir: "ci", path: "SUB" }));
    expect(sub.entries).toEqual([]);
    const found = ok<{ matches: Array<{ path: string }> }>(await h!.call("find_files", { workdir: "ci", pattern: "*" }));
    expect(found.matches.map((m) => m.path)).toEqual(["readme.md"]); // files only: sub/cert.PEM is denied
    const hits = ok<{ matches: Array<{ path: string }> }>(await h!.call("search_text", { workdir: "ci", query: "needle" }));
    expect(hits.matches.map((m) => m.path)).toEqual(["readme.md"]);
    const read = ok<{ content: string }>(await h!.call("read_text_file", { workdir: "ci", path: "README.MD" }));
    expect(read.content).toBe("public needle\n");
    expect(snapshot(backing)).toEqual(before);
  });

  test("a case-sensitive workdir (tmpfs) still serves ID_RSA and Secrets-free spellings, as before", async () => {
    const read = ok<{ content: string }>(await h!.call("read_text_file", { workdir: "cs", path: "ID_RSA" }));
    expect(read.content).toBe("upper-case name on a case-sensitive fs\n");
    const list = ok<{ entries: Array<{ name: string }> }>(await h!.call("list_directory", { workdir: "cs" }));
    expect(list.entries.map((e) => e.name)).toEqual(["ID_RSA"]);
    expect(errorCode(await h!.call("read_text_file", { workdir: "cs", path: "id_rsa" }))).toBe("DENIED_PATH");
    expect(fs.readdirSync(tmpfsMount)).toEqual(["ID_RSA"]);
  });
});

describe.skipIf(skip !== null)("ext4 images", () => {
  const hasMkfs = run(["sh", "-c", "command -v mkfs.ext4"]).ok;

  test.skipIf(!hasMkfs)("the superblock's casefold bit is read from real mkfs.ext4 output; a loop-mounted ext4 is sensitive", () => {
    const plain = path.join(base, "plain.img");
    const folded = path.join(base, "folded.img");
    for (const [img, extra] of [[plain, []], [folded, ["-O", "casefold"]]] as const) {
      fs.writeFileSync(img, "");
      fs.truncateSync(img, 8 * 1024 * 1024);
      const r = run(["mkfs.ext4", "-q", "-F", ...extra, img]);
      expect(r).toEqual({ ok: true, err: "" });
    }
    expect(ext4CasefoldFeature(plain)).toBe(false);
    expect(ext4CasefoldFeature(folded)).toBe(true);
    expect(ext4CasefoldFeature(path.join(base, "backing", "readme.md"))).toBeNull(); // not a superblock
    const mnt = path.join(base, "ext4");
    fs.mkdirSync(mnt);
    const m = run(["mount", "-o", "loop", plain, mnt]);
    expect(m.err).toBe("");
    mounted.push(mnt);
    const before = snapshot(mnt);
    const d = detectCaseSensitivity(mnt);
    expect(d.basis).toBe("detected-sensitive");
    expect(d.reason).toStartWith("ext4");
    expect(snapshot(mnt)).toEqual(before); // the probe wrote nothing
  });
});
