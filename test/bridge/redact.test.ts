// Redaction rules (agent-reference §5.2) on their own: paths under keys, lists, free text with
// sibling prefixes and punctuation, dropped native ids, credential shapes.
import { expect, test } from "bun:test";
import { Redactor } from "../../src/bridge/redact.ts";

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
