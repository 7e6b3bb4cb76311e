// PathPolicy on case-insensitive and case-sensitive workdirs: deny globs, hidden names and
// reserved names match every spelling a folding filesystem treats as the same name (case and
// Unicode normalisation), and a case-sensitive workdir keeps today's exact matching.
import { describe, expect, test } from "bun:test";
import { ServerfsError } from "../../src/errors.ts";
import { foldGlob, foldName } from "../../src/fs/fold.ts";
import { isReservedName, PathPolicy } from "../../src/fs/policy.ts";

function codeOf(p: PathPolicy, rel: string): string {
  try {
    p.check("w", rel.split("/"), rel);
  } catch (err) {
    if (err instanceof ServerfsError) return err.code;
    throw err;
  }
  return "OK";
}

const base = { allow_hidden: false, disable_default_deny: false, extra_deny_globs: [] as string[] };
const ci = (over: Partial<typeof base> = {}) => new PathPolicy({ ...base, ...over }, { caseInsensitive: true });
const cs = (over: Partial<typeof base> = {}) => new PathPolicy({ ...base, ...over }, { caseInsensitive: false });

const NFC = "S\u00e9crets"; // é precomposed
const NFD = "Se\u0301crets"; // e + combining acute

describe("case-insensitive workdir", () => {
  test("built-in deny list in other cases: DENIED_PATH, or HIDDEN_PATH_NOT_ALLOWED first for dot names", () => {
    const p = ci();
    for (const rel of ["ID_RSA", "Id_Rsa", "sub/ID_ED25519", "CERT.PEM", "Prod.Env", "server.KEY"]) expect(codeOf(p, rel)).toBe("DENIED_PATH");
    for (const rel of [".ENV", ".Env.local", ".SSH/config"]) expect(codeOf(p, rel)).toBe("HIDDEN_PATH_NOT_ALLOWED");
    const h = ci({ allow_hidden: true });
    for (const rel of [".ENV", ".Env.local", ".ENV.PRODUCTION", ".SSH/config", "x/.AWS/credentials", ".GnuPG", ".KUBE"]) {
      expect(codeOf(h, rel)).toBe("DENIED_PATH");
    }
    expect(codeOf(h, ".GITIGNORE")).toBe("OK");
    expect(codeOf(h, "ENV")).toBe("OK");
    expect(codeOf(h, "README.md")).toBe("OK");
  });

  test("folding-only spellings: long s, Kelvin sign (NFC), fullwidth is NOT folded", () => {
    const p = ci();
    expect(codeOf(p, "ID_R\u017fA")).toBe("DENIED_PATH"); // ſ upper-cases to S
    expect(codeOf(p, "x.\u212aEY")).toBe("DENIED_PATH"); // Kelvin sign is K after NFC
    // A different character, not a case variant: no filesystem folds it, and neither do we.
    expect(codeOf(p, "\uff49d_rsa")).toBe("OK");
  });

  test("slash deny glob `secrets/**`: Secrets/x, SECRETS and deeper descendants", () => {
    const p = ci({ extra_deny_globs: ["secrets/**"] });
    for (const rel of ["Secrets/x", "SECRETS", "sEcReTs/a/b.txt"]) expect(codeOf(p, rel)).toBe("DENIED_PATH");
    expect(codeOf(p, "other/Secrets/x")).toBe("OK");
    expect(p.entryVisible("", "Secrets")).toBe(false);
    expect(p.entryVisible("SECRETS", "x")).toBe(false);
    expect(p.entryVisible("docs", "Secrets")).toBe(true);
  });

  test("Unicode normalisation: NFD and NFC spellings of Sécrets match a glob written in either form", () => {
    for (const glob of [`${NFC.toLowerCase()}/**`, `${NFD.toLowerCase()}/**`, NFC, NFD]) {
      const p = ci({ extra_deny_globs: [glob] });
      for (const name of [NFC, NFD, NFC.toUpperCase(), NFD.toUpperCase()]) {
        expect(codeOf(p, `${name}/plan.md`)).toBe("DENIED_PATH");
        expect(p.entryVisible("", name)).toBe(false);
      }
      expect(codeOf(p, "Secrets/plan.md")).toBe("OK"); // no accent: another name
    }
  });

  test("reserved names in any case are RESERVED_PATH, before hidden and deny, and invisible", () => {
    const open = new PathPolicy({ allow_hidden: true, disable_default_deny: true, extra_deny_globs: [] }, { caseInsensitive: true });
    for (const rel of [".SERVERFS-TMP-x", ".Serverfs-Tmp-0123", "sub/.serverfs-TMP-1", ".SERVERFS-DISABLED", ".Serverfs-Disabled"]) {
      expect(codeOf(open, rel)).toBe("RESERVED_PATH");
      expect(codeOf(ci(), rel)).toBe("RESERVED_PATH");
    }
    expect(open.entryVisible("", ".SERVERFS-TMP-abc")).toBe(false);
    expect(open.entryVisible("", ".Serverfs-Disabled")).toBe(false);
    expect(isReservedName(".SERVERFS-TMP-x", true)).toBe(true);
    expect(isReservedName(".SERVERFS-TMP-x")).toBe(false);
    expect(codeOf(open, ".serverfs-disabled-not")).toBe("OK");
  });

  test("bracket classes: ranges, mixed-case ranges, negation and the special members", () => {
    const p = ci({ extra_deny_globs: ["[A-C]*.lock", "[Z-a]x", "[!A-Z]*.cfg", "[]A-]y"] });
    for (const name of ["a.lock", "B.LOCK", "c.Lock", "Zx", "zx", "_x", "ax", "Ax", "1.cfg", "a.cfg", "]y", "-y", "ay", "AY"]) {
      expect(codeOf(p, name)).toBe("DENIED_PATH");
    }
    for (const name of ["d.lock", "bx", "]Z", "by"]) expect(codeOf(p, name)).toBe("OK");
    // `[!A-Z]` matches `a`; the file `A.cfg` is also reachable as `a.cfg`, so it is refused too.
    expect(codeOf(p, "A.cfg")).toBe("DENIED_PATH");
    // Classes spanning all of Unicode: every spelling decision still holds.
    const wide = ci({ extra_deny_globs: ["[!\u0100-\uffff]y", "[\u0001-\u{10ffff}]x"] });
    expect(codeOf(wide, "\u03a9y")).toBe("OK"); // Ω: every spelling (Ω ω Ω-ohm) is in the class
    expect(codeOf(wide, "ay")).toBe("DENIED_PATH");
    expect(codeOf(wide, "\u01c4x")).toBe("DENIED_PATH");
    const neg = ci({ extra_deny_globs: ["[!aA]*.ini"] });
    expect(codeOf(neg, "A.ini")).toBe("OK");
    expect(codeOf(neg, "a.ini")).toBe("OK");
    expect(codeOf(neg, "b.ini")).toBe("DENIED_PATH");
  });

  test("folding only adds refusals: whatever a case-sensitive workdir denies stays denied", () => {
    const globs = ["?.txt", "stra\u00dfe", "[\u00df]*", "Makefile", "*.PEM"];
    const exact = cs({ extra_deny_globs: globs });
    const folded = ci({ extra_deny_globs: globs });
    for (const name of ["\u00df.txt", "stra\u00dfe", "\u00dfx", "Makefile", "a.PEM", "a.pem"]) {
      if (exact.isDenied([name])) expect(folded.isDenied([name])).toBe(true);
    }
    expect(folded.isDenied(["STRASSE"])).toBe(true); // ß folds to ss
    expect(folded.isDenied(["MAKEFILE"])).toBe(true);
  });

  test("a policy built without knowing its filesystem folds (unknown is insensitive)", () => {
    const p = new PathPolicy(base);
    expect(p.caseInsensitive).toBe(true);
    expect(codeOf(p, "ID_RSA")).toBe("DENIED_PATH");
  });
});

describe("case-sensitive workdir keeps exact matching", () => {
  test("ID_RSA, .ENV (with hidden allowed), Secrets/x and .SERVERFS-TMP-x are ordinary names", () => {
    const p = cs({ allow_hidden: true, extra_deny_globs: ["secrets/**"] });
    expect(p.caseInsensitive).toBe(false);
    for (const rel of ["ID_RSA", ".ENV", ".Env.local", "Secrets/x", ".SERVERFS-TMP-x", ".Serverfs-Disabled", "CERT.PEM"]) {
      expect(codeOf(p, rel)).toBe("OK");
    }
    for (const rel of ["id_rsa", ".env", ".env.local", "secrets/x", ".serverfs-tmp-x", "cert.pem"]) {
      expect(codeOf(p, rel)).not.toBe("OK");
    }
    expect(p.entryVisible("", "ID_RSA")).toBe(true);
    expect(p.entryVisible("", "Secrets")).toBe(true);
    // No normalisation folding either: the NFD spelling is another name here.
    const n = cs({ extra_deny_globs: [NFC] });
    expect(codeOf(n, NFC)).toBe("DENIED_PATH");
    expect(codeOf(n, NFD)).toBe("OK");
  });
});

describe("case-sensitive but normalisation-insensitive workdir (case-sensitive APFS)", () => {
  test("NFD and NFC spellings match each other; case still matters", () => {
    const p = new PathPolicy({ ...base, extra_deny_globs: [`${NFC}/**`] }, { caseInsensitive: false, normalizationInsensitive: true });
    expect(p.caseInsensitive).toBe(false);
    expect(codeOf(p, `${NFD}/plan.md`)).toBe("DENIED_PATH");
    expect(codeOf(p, `${NFC}/plan.md`)).toBe("DENIED_PATH");
    expect(p.entryVisible("", NFD)).toBe(false);
    expect(codeOf(p, `${NFC.toUpperCase()}/plan.md`)).toBe("OK");
    expect(codeOf(p, "ID_RSA")).toBe("OK");
    expect(codeOf(p, "id_rsa")).toBe("DENIED_PATH");
    const nfdGlob = new PathPolicy({ ...base, extra_deny_globs: [NFD] }, { caseInsensitive: false, normalizationInsensitive: true });
    expect(codeOf(nfdGlob, NFC)).toBe("DENIED_PATH");
  });
});

describe("fold primitives", () => {
  test("foldName: ASCII lower-case, NFC, upper-then-lower, context-free sigma", () => {
    expect(foldName("ID_RSA")).toBe("id_rsa");
    expect(foldName(NFD)).toBe(foldName(NFC));
    expect(foldName("STRA\u00dfE")).toBe("strasse");
    expect(foldName("\u039f\u0394\u039f\u03a3")).toBe(foldName("\u03bf\u03b4\u03bf\u03c2")); // ΟΔΟΣ / οδος
  });
  test("foldGlob leaves metacharacters and uncased classes alone", () => {
    expect(foldGlob("*.PEM", false)).toBe("*.pem");
    expect(foldGlob("[0-9]?.Lock", false)).toBe("[0-9]?.lock");
    expect(foldGlob("Docs/**/[A-B]x", true)).toBe("docs/**/[ABab]x");
    expect(foldGlob("[^A]", true)).toBe("[!A]"); // `a` stays matchable: `A` is also `a`
    expect(foldGlob("[^A]", false)).toBe("[Aa^]"); // fnmatch: `^` is a member
    expect(foldGlob("a[B", false)).toBe("a[b"); // unterminated `[` is a literal
  });
});

// Reference: a name is refused on a folding filesystem iff some spelling of it (each letter in
// either case) is refused by the exact, case-sensitive policy.
function spellings(name: string): string[] {
  let out = [""];
  for (const ch of name) {
    const vs = [...new Set([ch, ch.toLowerCase(), ch.toUpperCase()])];
    out = out.flatMap((prefix) => vs.map((v) => prefix + v));
  }
  return out;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("property: folded matching equals 'some spelling is denied'", () => {
  test("random component and slash globs against random names", () => {
    const rand = rng(20261201);
    const pick = (alphabet: string, max: number) => {
      let s = "";
      const n = 1 + Math.floor(rand() * max);
      for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
      return s;
    };
    let denied = 0;
    let checked = 0;
    for (let round = 0; round < 300; round++) {
      const glob = pick("aAbBzZ_.*?[]!^-", 7);
      const slashGlob = `${pick("aAbB*?[]!^", 4)}/${pick("aAbB*?[]!^", 4)}`;
      const globs = [glob, slashGlob];
      const exact = cs({ allow_hidden: true, disable_default_deny: true, extra_deny_globs: globs } as typeof base);
      const folded = ci({ allow_hidden: true, disable_default_deny: true, extra_deny_globs: globs } as typeof base);
      for (let n = 0; n < 20; n++) {
        const parts = [pick("aAbBzZ_.-!^[]", 5), pick("aAbB._", 4)];
        const want = spellings(parts[0] as string).some((a) => spellings(parts[1] as string).some((b) => exact.isDenied([a, b])));
        expect({ globs, parts, denied: folded.isDenied(parts) }).toEqual({ globs, parts, denied: want });
        // The walk's test agrees with direct access for an entry of an allowed directory.
        if (!folded.isDenied([parts[0] as string])) expect(folded.entryVisible(parts[0] as string, parts[1] as string)).toBe(!want);
        checked++;
        if (want) denied++;
      }
    }
    // The generator must exercise both outcomes, or the property says nothing.
    expect(denied).toBeGreaterThan(200);
    expect(checked - denied).toBeGreaterThan(200);
  });
});
