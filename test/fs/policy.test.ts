// The lexical policy on its own: normalisation, reserved names, hidden names, deny semantics
// (docs/security.md) and the two glob dialects.
import { describe, expect, test } from "bun:test";
import { ServerfsError } from "../../src/errors.ts";
import { compileFnmatch, compilePathGlob, compileSearchGlob } from "../../src/fs/glob.ts";
import { namesDirectory, normalizeRequestPath, PathPolicy } from "../../src/fs/policy.ts";

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServerfsError) return err.code;
    throw err;
  }
  return "OK";
}

const base = { allow_hidden: false, disable_default_deny: false, extra_deny_globs: [] as string[] };

describe("normalizeRequestPath", () => {
  test("root spellings are all the root", () => {
    for (const p of ["", ".", "./", "sub/..", "a/b/../..", "./././"]) expect(normalizeRequestPath("w", p)).toEqual([]);
  });
  test("escapes and absolute paths are PATH_OUTSIDE_WORKDIR", () => {
    for (const p of ["..", "../x", "../../etc/passwd", "a/../../x", "/etc/passwd", "~/x", "~", "/"]) {
      expect(codeOf(() => normalizeRequestPath("w", p))).toBe("PATH_OUTSIDE_WORKDIR");
    }
  });
  test("NUL is ACCESS_DENIED and the message escapes it", () => {
    let msg = "";
    try {
      normalizeRequestPath("w", "a\0b");
    } catch (err) {
      expect((err as ServerfsError).code).toBe("ACCESS_DENIED");
      msg = (err as ServerfsError).message;
    }
    expect(msg).not.toContain("\0");
    expect(msg).toContain("a\\x00b");
  });
  test("backslash is an ordinary character on POSIX; .. is lexical", () => {
    expect(normalizeRequestPath("w", "a\\b")).toEqual(["a\\b"]);
    expect(normalizeRequestPath("w", "..\\x")).toEqual(["..\\x"]);
    expect(normalizeRequestPath("w", "a//b/./c/../d")).toEqual(["a", "b", "d"]);
  });
});

describe("normalizeRequestPath with the Windows rules", () => {
  const win = (p: string) => normalizeRequestPath("w", p, "win32");
  test("both separators split; .. is lexical across them", () => {
    expect(win("a\\b/c")).toEqual(["a", "b", "c"]);
    expect(win("a\\..\\b")).toEqual(["b"]);
    expect(win("sub\\")).toEqual(["sub"]);
  });
  test("drive, root-relative, UNC and device-namespace spellings are PATH_OUTSIDE_WORKDIR", () => {
    for (const p of ["..\\x", "a\\..\\..\\x", "C:\\x", "C:x", "c:/x", "\\x", "\\\\srv\\share", "//srv/share", "\\\\?\\C:\\x", "\\\\.\\PhysicalDrive0", "/x", "a:b"]) {
      expect([p, codeOf(() => win(p))]).toEqual([p, "PATH_OUTSIDE_WORKDIR"]);
    }
  });
  test("device names, streams, trailing dots/spaces and forbidden characters are INVALID_NAME", () => {
    const bad = ["CON", "con", "NUL.txt", "nul.tar.gz", "AUX ", "PRN .txt", "COM1", "com9.log", "LPT\u00b9", "COM\u00b3", "CONIN$", "conout$.x",
      "ab:c", "a.txt::$DATA", "x\\C:\\y", "id_rsa.", "id_rsa ", "...", "a<b", "a>b", "a|b", "a?b", "a*b", 'a"b', "a\tb"];
    for (const p of bad) expect([p, codeOf(() => win(p))]).toEqual([p, "INVALID_NAME"]);
    expect(codeOf(() => win(`sub/${"x".repeat(256)}`))).toBe("INVALID_NAME");
    expect(win("x".repeat(255))).toEqual(["x".repeat(255)]);
  });
  test("names that only resemble the rules stay valid", () => {
    for (const p of ["CONSOLE", "nul_", "COM10", "LPT", "com", "a.b.c", ".hidden", "x~1", "CON_x.txt", "auxiliary.md"]) expect(win(p)).toEqual([p]);
  });
  test("on POSIX the same spellings keep their POSIX meaning", () => {
    expect(normalizeRequestPath("w", "CON", "linux")).toEqual(["CON"]);
    expect(normalizeRequestPath("w", "a:b", "linux")).toEqual(["a:b"]);
    expect(normalizeRequestPath("w", "C:\\x", "linux")).toEqual(["C:\\x"]);
  });
  test("a path ending in a backslash names a directory on Windows only", () => {
    expect(namesDirectory("a\\", "win32")).toBe(true);
    expect(namesDirectory("a\\..", "win32")).toBe(true);
    expect(namesDirectory("a\\", "linux")).toBe(false);
    expect(namesDirectory("a\\b", "win32")).toBe(false);
  });
  test("a Windows policy folds case: every spelling of a denied name is DENIED_PATH", () => {
    const p = new PathPolicy(base, { caseInsensitive: true });
    for (const name of ["ID_RSA", "Id_Rsa", "SERVER.PEM", "secrets.KEY"]) expect(codeOf(() => p.check("w", win(name), name))).toBe("DENIED_PATH");
    expect(codeOf(() => p.check("w", win(".ENV"), ".ENV"))).toBe("HIDDEN_PATH_NOT_ALLOWED");
  });
});

describe("PathPolicy.check order and sets", () => {
  const p = new PathPolicy(base);
  test("reserved beats hidden beats deny", () => {
    expect(codeOf(() => p.check("w", [".serverfs-tmp-abc"], "x"))).toBe("RESERVED_PATH");
    expect(codeOf(() => p.check("w", ["sub", ".serverfs-tmp-0123456789abcdef"], "x"))).toBe("RESERVED_PATH");
    expect(codeOf(() => p.check("w", [".serverfs-disabled"], "x"))).toBe("RESERVED_PATH");
    expect(codeOf(() => p.check("w", [".env"], "x"))).toBe("HIDDEN_PATH_NOT_ALLOWED");
    expect(codeOf(() => p.check("w", ["id_rsa"], "x"))).toBe("DENIED_PATH");
    expect(codeOf(() => p.check("w", ["ok.txt"], "x"))).toBe("OK");
  });
  test("reserved even in the most permissive policy", () => {
    const open = new PathPolicy({ allow_hidden: true, disable_default_deny: true, extra_deny_globs: [] });
    expect(codeOf(() => open.check("w", [".serverfs-tmp-x"], "x"))).toBe("RESERVED_PATH");
    expect(codeOf(() => open.check("w", [".serverfs-disabled"], "x"))).toBe("RESERVED_PATH");
    expect(codeOf(() => open.check("w", [".env"], "x"))).toBe("OK");
    // on a case-sensitive workdir a different spelling is an ordinary name (test/fs/casefold-policy.test.ts has the rest)
    const sensitive = new PathPolicy({ allow_hidden: true, disable_default_deny: true, extra_deny_globs: [] }, { caseInsensitive: false });
    expect(codeOf(() => sensitive.check("w", [".SERVERFS-TMP-x"], "x"))).toBe("OK");
  });
  test("built-in deny list with hidden allowed", () => {
    const h = new PathPolicy({ ...base, allow_hidden: true });
    for (const parts of [[".env"], [".env.local"], ["prod.env"], ["a", "cert.pem"], ["k.key"], ["id_ed25519"], [".ssh", "config"], ["x", ".aws", "credentials"], [".gnupg"], [".kube", "config"]]) {
      expect(codeOf(() => h.check("w", parts, "x"))).toBe("DENIED_PATH");
    }
    expect(codeOf(() => h.check("w", [".gitignore"], "x"))).toBe("OK");
    expect(codeOf(() => h.check("w", ["env"], "x"))).toBe("OK");
  });
  test("disable_default_deny releases the built-ins but never the extra globs", () => {
    const p2 = new PathPolicy({ allow_hidden: true, disable_default_deny: true, extra_deny_globs: ["*.env"] });
    expect(codeOf(() => p2.check("w", ["id_rsa"], "x"))).toBe("OK");
    expect(codeOf(() => p2.check("w", [".ssh", "id_rsa"], "x"))).toBe("OK");
    expect(codeOf(() => p2.check("w", ["prod.env"], "x"))).toBe("DENIED_PATH");
  });
});

describe("deny semantics (docs/security.md)", () => {
  test("a glob without / matches ANY component", () => {
    const p = new PathPolicy({ ...base, extra_deny_globs: ["internal"] });
    expect(p.isDenied(["internal"])).toBe(true);
    expect(p.isDenied(["internal", "x.py"])).toBe(true);
    expect(p.isDenied(["a", "internal", "b", "c.txt"])).toBe(true);
    expect(p.isDenied(["internals", "x.py"])).toBe(false);
    const star = new PathPolicy({ ...base, extra_deny_globs: ["secret*"] });
    expect(star.isDenied(["secrets", "plan.md"])).toBe(true);
    expect(star.isDenied(["docs", "secret-plan.md"])).toBe(true);
  });
  test("a glob with / matches the workdir-relative path, ** crosses directories, descendants inherit", () => {
    const p = new PathPolicy({ ...base, extra_deny_globs: ["docs/*.md", "build/**", "**/private/**"] });
    expect(p.isDenied(["docs", "a.md"])).toBe(true);
    expect(p.isDenied(["docs", "sub", "a.md"])).toBe(false);
    expect(p.isDenied(["x", "docs", "a.md"])).toBe(false);
    expect(p.isDenied(["build"])).toBe(true);
    expect(p.isDenied(["build", "out", "x.o"])).toBe(true);
    expect(p.isDenied(["src", "private"])).toBe(true);
    expect(p.isDenied(["src", "a", "private", "k.txt"])).toBe(true);
    expect(p.isDenied(["src", "privates", "k.txt"])).toBe(false);
    const dir = new PathPolicy({ ...base, extra_deny_globs: ["docs/a.md"] });
    expect(dir.isDenied(["docs", "a.md", "child.txt"])).toBe(true);
  });
  test("entryVisible agrees with check for children", () => {
    const p = new PathPolicy({ ...base, extra_deny_globs: ["internal", "docs/*.md"] });
    expect(p.entryVisible("", "internal")).toBe(false);
    expect(p.entryVisible("docs", "a.md")).toBe(false);
    expect(p.entryVisible("docs", "a.txt")).toBe(true);
    expect(p.entryVisible("", ".hidden")).toBe(false);
    expect(p.entryVisible("x", ".serverfs-tmp-1")).toBe(false);
  });
});

describe("fnmatch (find_files, component deny)", () => {
  const m = (pat: string, name: string) => compileFnmatch(pat).test(name);
  test("wildcards, sets, negation, literal [", () => {
    expect(m("*.txt", "a.txt")).toBe(true);
    expect(m("*.txt", "a.TXT")).toBe(false);
    expect(m("?.md", "a.md")).toBe(true);
    expect(m("?.md", "ab.md")).toBe(false);
    expect(m("[ab]*", "banana")).toBe(true);
    expect(m("[!ab]*", "banana")).toBe(false);
    expect(m("[!ab]*", "cherry")).toBe(true);
    expect(m("[a-c]x", "bx")).toBe(true);
    expect(m("[]]x", "]x")).toBe(true);
    expect(m("[x", "[x")).toBe(true);
    expect(m("a.b", "axb")).toBe(false);
    expect(m("*", ".hidden")).toBe(true);
    expect(m("日本*", "日本語.txt")).toBe(true);
    expect(m("?", "🎉")).toBe(true);
    expect(m("(a|b)", "(a|b)")).toBe(true);
  });
});

describe("path glob (search_text glob, rg --glob)", () => {
  const g = (pat: string, rel: string) => {
    const name = rel.split("/").pop() as string;
    return compileSearchGlob(pat)(rel, name);
  };
  test("no slash: file name at any depth", () => {
    expect(g("*.md", "docs/sub/y.md")).toBe(true);
    expect(g("y.md", "docs/sub/y.md")).toBe(true);
    expect(g("*.md", "docs/sub/y.txt")).toBe(false);
  });
  test("with slash: relative to the search root, components aligned", () => {
    expect(g("docs/*.md", "docs/x.md")).toBe(true);
    expect(g("docs/*.md", "docs/sub/y.md")).toBe(false);
    expect(g("**/y.md", "y.md")).toBe(true);
    expect(g("**/y.md", "docs/sub/y.md")).toBe(true);
    expect(g("docs/**", "docs/sub/y.md")).toBe(true);
    expect(g("docs/**", "other/x.md")).toBe(false);
    expect(g("docs/**/y.md", "docs/y.md")).toBe(true);
    expect(g("docs/**/y.md", "docs/a/b/y.md")).toBe(true);
    expect(g("sub/*.md", "sub/y.md")).toBe(true);
  });
  test("* and ? never cross /; classes; unterminated [ literal; braces literal", () => {
    expect(compilePathGlob("a*b").test("a/b")).toBe(false);
    expect(compilePathGlob("a?b").test("a/b")).toBe(false);
    expect(compilePathGlob("[^x]y").test("zy")).toBe(true);
    expect(compilePathGlob("[!x]y").test("xy")).toBe(false);
    expect(compilePathGlob("[!x]y").test("/y")).toBe(false);
    expect(compilePathGlob("a[b").test("a[b")).toBe(true);
    expect(compilePathGlob("{a,b}.md").test("a.md")).toBe(false);
    expect(compilePathGlob("{a,b}.md").test("{a,b}.md")).toBe(true);
  });
});

describe("regex metacharacters in globs are literal", () => {
  test("dash, slash, braces, dollar", () => {
    expect(compileFnmatch("a-b").test("a-b")).toBe(true);
    expect(compileFnmatch("[a-]x").test("-x")).toBe(true);
    expect(compileFnmatch("$x^").test("$x^")).toBe(true);
    expect(compilePathGlob("a-b/c.d").test("a-b/c.d")).toBe(true);
    expect(compilePathGlob("a-b/c.d").test("a-b/cxd")).toBe(false);
    expect(compileFnmatch("[\\]").test("\\")).toBe(true);
  });
});

describe("name order", () => {
  test("sortByName is code-point order with and without astral names", async () => {
    const { sortByName, compareNames } = await import("../../src/fs/order.ts");
    const plain = ["b", "a", "B", "a0", "", "ab"].map((name) => ({ name }));
    expect(sortByName(plain).map((e) => e.name)).toEqual(["", "B", "a", "a0", "ab", "b"]);
    const mixed = ["\uFF21", "\u{1F600}", "z", "\uE000"].map((name) => ({ name }));
    expect(sortByName(mixed).map((e) => e.name)).toEqual(["z", "\uE000", "\uFF21", "\u{1F600}"]);
    expect(compareNames("\u{1F600}", "\uFFFF")).toBeGreaterThan(0);
  });
});
