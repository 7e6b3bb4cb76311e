// Redaction rules (docs/agent-bridge.md) on their own: paths under keys, lists, free text with
// sibling prefixes and punctuation, dropped native ids, credential shapes.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "bun:test";
import { bridgeHostRoots, type HostRoot } from "../../src/runtimes/kernel/host-roots.ts";
import { Redactor } from "../../src/runtimes/kernel/redact.ts";

const r = new Redactor("/srv/repo", ["hunter2-very-secret"]);

test("path keys and path lists become workdir-relative or <outside-workdir>", () => {
  expect(
    r.payload({
      path: "/srv/repo/src/a.ts",
      cwd: "/srv/repo",
      file_path: "/etc/passwd",
      writableRoots: ["/srv/repo/build", "/srv/repo2/x", "/tmp"],
      grantRoot: "/srv/repo/../other",
    }),
  ).toEqual({ path: "src/a.ts", cwd: ".", file_path: "<outside-workdir>", writableRoots: ["build", "<outside-workdir>", "<outside-workdir>"], grantRoot: "<outside-workdir>" });
});

test("native ids are dropped at any depth; other absolute strings are relativised", () => {
  expect(r.payload({ native_session_id: "s", nested: { thread_id: "t", turn_id: "u", target: "/srv/repo/x" }, changes: [{ path: "/opt/y" }] })).toEqual({
    nested: { target: "x" },
    changes: [{ path: "<outside-workdir>" }],
  });
});

test("free text: root tokens, sibling prefixes, quotes and trailing punctuation", () => {
  expect(r.text("wrote /srv/repo/result.txt.")).toBe("wrote <workdir>/result.txt.");
  expect(r.text("see '/srv/repo/a b' and \"/srv/repo2/notes.txt\"!")).toBe("see '<workdir>/a b' and \"<outside-workdir>\"!");
  expect(r.text("root is /srv/repo: fine?")).toBe("root is <workdir>: fine?");
  expect(r.text("/srv/repo/../etc/passwd")).toBe("<outside-workdir>");
  expect(r.text("/srv/repository/x")).toBe("<outside-workdir>");
});

test("credentials never pass", () => {
  const out = r.text("key sk-abcdefghijklmnopqrstuvwx token ghp_abcdefghijklmnopqrstuvwxyz0123 Authorization: Bearer abc.def-ghi_jkl123 pw hunter2-very-secret");
  expect(out).not.toContain("sk-abcdef");
  expect(out).not.toContain("ghp_abc");
  expect(out).not.toContain("abc.def-ghi");
  expect(out).not.toContain("hunter2");
  expect(out).toContain("Bearer <redacted>");
});

// Host roots besides the workdir: the Bridge's home, state, temp and provider config directories.
describe("host roots", () => {
  const roots: HostRoot[] = [
    { path: "/home/alice", placeholder: "<home>" },
    { path: "/home/alice/.local/state/serverfs", placeholder: "<state>" },
    { path: "/home/alice/.local/state/serverfs/tmp", placeholder: "<tmp>" },
    { path: "/var/tmp/x9", placeholder: "<tmp>" },
    { path: "/home/alice/.codex", placeholder: "<provider-config>" },
  ];
  const h = new Redactor("/home/alice/repo", [], roots);

  test("the most specific root wins: workdir and state inside home keep their own placeholder", () => {
    expect(h.text("edit /home/alice/repo/src/a.ts")).toBe("edit <workdir>/src/a.ts");
    expect(h.text("db at /home/alice/.local/state/serverfs/bridge.sqlite3")).toBe("db at <state>/bridge.sqlite3");
    expect(h.text("scratch /home/alice/.local/state/serverfs/tmp/codex-run_1/x")).toBe("scratch <tmp>/codex-run_1/x");
    expect(h.text("extensions in /home/alice/.vscode/extensions, ok")).toBe("extensions in <home>/.vscode/extensions, ok");
    expect(h.text("cfg /home/alice/.codex/config.toml")).toBe("cfg <provider-config>/config.toml");
    expect(h.text("home is /home/alice.")).toBe("home is <home>.");
    expect(h.text("(/var/tmp/x9/a) and /private/var/tmp/x9/b!")).toBe("(<tmp>/a) and <tmp>/b!");
  });

  test("sibling-prefix tokens are not mangled and fall through to a shorter root", () => {
    const short = new Redactor("/srv/repo", [], [{ path: "/home/al", placeholder: "<home>" }]);
    expect(short.text("other user /home/alice/x and /home/al/y")).toBe("other user /home/alice/x and <home>/y");
    expect(short.text("/home/al.bak/z")).toBe("/home/al.bak/z");
    expect(h.text("/home/alice/.local/state/serverfs-old/db")).toBe("<home>/.local/state/serverfs-old/db");
    expect(h.text("/home/alice/.codex2/x")).toBe("<home>/.codex2/x");
    expect(h.text("/home/alice/repo2/x")).toBe("<outside-workdir>");
    expect(h.text("/home/alice/../bob/.ssh")).toBe("<outside-workdir>");
  });

  test("structured payloads: every string leaf, path keys stay relative-or-outside", () => {
    expect(
      h.payload({
        text: "loaded /home/alice/.codex/skills and /home/alice/.local/state/serverfs/spool",
        locations: [{ path: "/home/alice/.codex/x", line: 3 }],
        detail: { note: "tmp: /var/tmp/x9/f q" },
        cwd: "/home/alice/repo/src",
        target: "/home/alice/.ssh/id_ed25519",
      }),
    ).toEqual({
      text: "loaded <provider-config>/skills and <state>/spool",
      locations: [{ path: "<outside-workdir>", line: 3 }],
      detail: { note: "tmp: <tmp>/f q" },
      cwd: "src",
      target: "<outside-workdir>",
    });
  });

  test("a root reached through a symlink is redacted under both spellings", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-redact-")));
    try {
      fs.mkdirSync(path.join(dir, "real", "carol", "repo"), { recursive: true });
      fs.symlinkSync(path.join(dir, "real", "carol"), path.join(dir, "link"));
      const r = new Redactor(path.join(dir, "link", "repo"), [], [{ path: path.join(dir, "link"), placeholder: "<home>" }]);
      expect(r.text(`${dir}/real/carol/.config/x and ${dir}/link/.config/y`)).toBe("<home>/.config/x and <home>/.config/y");
      expect(r.text(`${dir}/real/carol/repo/a.txt`)).toBe("<workdir>/a.txt");
      expect(r.relative(`${dir}/real/carol/repo/b/c`)).toBe("b/c");
      expect(r.text(`${dir}/real/carol/repo/a.txt`)).not.toContain("carol");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("filesystem roots are never used as a redaction root", () => {
    const r = new Redactor("/srv/repo", [], [{ path: "/", placeholder: "<home>" }, { path: "C:\\", placeholder: "<tmp>" }]);
    expect(r.text("/etc/hosts and C:\\Windows")).toBe("/etc/hosts and C:\\Windows");
  });

  test("Windows-style roots: either separator, runs of them, any case; workdir-relative with /", () => {
    const w = new Redactor("C:\\Users\\Bob\\repo", [], [
      { path: "C:\\Users\\Bob", placeholder: "<home>" },
      { path: "C:\\Users\\Bob\\AppData\\Local\\Temp", placeholder: "<tmp>" },
    ]);
    expect(w.text("see C:\\Users\\Bob\\.codex\\config.toml.")).toBe("see <home>\\.codex\\config.toml.");
    expect(w.text("c:/users/bob/Documents")).toBe("<home>/Documents");
    expect(w.text("json \"C:\\\\Users\\\\Bob\\\\AppData\\\\Local\\\\Temp\\\\x\"")).toBe("json \"<tmp>\\\\x\"");
    expect(w.text("C:\\Users\\Bob\\repo\\src\\a.ts")).toBe("<workdir>\\src\\a.ts");
    expect(w.text("C:\\Users\\Bobby\\x")).toBe("C:\\Users\\Bobby\\x");
    expect(w.text("C:\\Users\\Bob\\repo2\\x")).toBe("<outside-workdir>");
    expect(w.relative("C:\\Users\\Bob\\repo\\src\\a.ts")).toBe("src/a.ts");
    expect(w.relative("c:/users/bob/repo")).toBe(".");
    expect(w.relative("C:\\Users\\Bob\\repo\\..\\x")).toBe("<outside-workdir>");
    expect(w.payload({ path: "C:\\Users\\Bob\\Desktop" })).toEqual({ path: "<outside-workdir>" });
  });
});

describe("bridgeHostRoots", () => {
  test("home, state, run and temp dirs, provider config dirs from both environments; relative values ignored", () => {
    const roots = bridgeHostRoots({
      paths: { stateDir: "/s/state", tmpDir: "/s/state/tmp", runDir: "/run/user/1000/serverfs-ab" },
      envs: [{ HOME: "/home/b", TMPDIR: "/tmp/b", XDG_CONFIG_HOME: "/cfg/b" }, { CODEX_HOME: "/opt/codex-home", HOME: "/home/b2", TMP: "rel" }],
      homedir: "/home/b",
      tmpdir: "/tmp",
    });
    const by = (placeholder: string) => roots.filter((r) => r.placeholder === placeholder).map((r) => r.path).sort();
    expect(by("<home>")).toEqual(["/home/b", "/home/b2"]);
    expect(by("<state>")).toEqual(["/run/user/1000/serverfs-ab", "/s/state"]);
    expect(by("<tmp>")).toEqual(["/s/state/tmp", "/tmp", "/tmp/b"]);
    expect(by("<provider-config>")).toEqual(
      ["/cfg/b", "/home/b/.claude", "/home/b/.codex", "/home/b/.qoder", "/home/b2/.claude", "/home/b2/.codex", "/home/b2/.qoder", "/opt/codex-home"].sort(),
    );
  });
});

test("adversarial text: megabytes of separators and near-miss prefixes are one linear pass", () => {
  // A root compiled with unbounded separator runs backtracks quadratically here and never ends.
  const w = new Redactor("C:\\Users\\Bob\\repo", [], [{ path: "C:\\Users\\Bob", placeholder: "<home>" }, { path: "/home/alice", placeholder: "<home>" }]);
  for (const unit of ["/", "\\", "C:\\Users\\Bo", "/home/alic", "\\\\"]) {
    const s = unit.repeat(Math.ceil((2 << 20) / unit.length));
    expect(w.text(s)).toBe(s);
  }
  expect(w.text(`${"/".repeat(1 << 20)}home/alice/x`)).toBe(`${"/".repeat((1 << 20) - 1)}<home>/x`);
});
