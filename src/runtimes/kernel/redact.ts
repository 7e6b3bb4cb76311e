// Host-path and secret redaction for everything a caller can read back: event payloads,
// interaction payloads, final responses and error messages (rules in docs/agent-bridge.md).
// A workdir path under a path key becomes workdir-relative ("." for the root) or
// "<outside-workdir>"; free text shows "<workdir>/rel", and the Bridge's other host roots (its
// home, state, temp and provider config directories, see host-roots.ts) become "<home>/rel",
// "<state>/rel", "<tmp>/rel", "<provider-config>/rel". Native provider ids are dropped.
import fs from "node:fs";
import type { HostRoot } from "./host-roots.ts";
import { isWindowsStyle } from "./path-style.ts";

const DROPPED_KEYS = new Set(["native_session_id", "native_turn_id", "thread_id", "turn_id"]);
const PATH_KEYS = new Set(["path", "cwd", "relative_cwd", "host_path", "file_path", "grantRoot"]);
const PATH_LIST_KEYS = new Set(["read", "write", "readableRoots", "writableRoots"]);
export const OUTSIDE = "<outside-workdir>";
const WORKDIR = "<workdir>";

// Credential shapes that must never be echoed back, even if a provider prints them.
const SECRET_PATTERNS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abpr]-[A-Za-z0-9-]{10,}/g,
  /(\b[Bb]earer\s+)[A-Za-z0-9._~+/=-]{12,}/g,
];

// A name character right after a root makes the token a sibling (`/home/al` vs `/home/alice`);
// dots count only when a name character follows, so "see /srv/repo." keeps its full stop.
const NAME = "A-Za-z0-9_\\-";
const SIBLING_AHEAD = `(?:[${NAME}]|\\.+[${NAME}])`;
const TAIL = `((?:[\\\\/][^\\s"'\`<>()\\[\\]{},;]*)?)`;
// Rank for identical paths: the most telling placeholder wins.
const RANK: Record<string, number> = { [WORKDIR]: 0, "<state>": 1, "<tmp>": 2, "<provider-config>": 3, "<home>": 4 };

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}


/** A root without trailing separators; null for a filesystem root, which would swallow every path. */
function normalizeRoot(p: string): string | null {
  const trimmed = isWindowsStyle(p) ? p.replace(/[\\/]+$/, "") : p.replace(/\/+$/, "");
  if (trimmed === "" || /^[A-Za-z]:$/.test(trimmed) || !/[^\\/]/.test(trimmed)) return null;
  return trimmed;
}

/**
 * The spellings under which a root can reach a provider: as given, its realpath (a home reached
 * through a symlink), and macOS's /tmp, /var, /etc ⇄ /private/... aliases (kept on every
 * platform so the rule is testable anywhere; an extra alias only redacts more).
 */
export function rootVariants(p: string): string[] {
  const base = normalizeRoot(p);
  if (base === null) return [];
  const out = new Set([base]);
  if (!isWindowsStyle(base)) {
    const real = realpathOfLongestPrefix(base);
    if (real !== null) out.add(real);
    for (const v of [...out]) {
      const m = /^\/private(\/(?:tmp|var|etc)(?:\/.*)?)$/.exec(v);
      if (m) out.add(m[1]!);
      else if (/^\/(?:tmp|var|etc)(?:\/|$)/.test(v)) out.add(`/private${v}`);
    }
  }
  return [...out].map(normalizeRoot).filter((v): v is string => v !== null);
}

/** realpath of the longest existing ancestor plus the rest, so a root not yet created still resolves. */
function realpathOfLongestPrefix(p: string): string | null {
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = fs.realpathSync(cur);
      return rest.length === 0 ? real : `${real.replace(/\/+$/, "")}/${rest.reverse().join("/")}`;
    } catch {
      const slash = cur.lastIndexOf("/");
      if (slash <= 0) return null;
      rest.push(cur.slice(slash + 1));
      cur = cur.slice(0, slash);
    }
  }
}

// A separator inside a root: one "/" on POSIX; on Windows either kind, doubled at most (JSON-escaped
// text). Bounded on purpose: an unbounded run (`/+`) backtracks quadratically on a line of slashes.
const WIN_SEP = "[\\\\/]{1,2}";

/** Root as a pattern: on Windows either separator, in any case. */
function rootPattern(p: string): string {
  if (!isWindowsStyle(p)) return p.split(/\/+/).map(escapeRegex).join("/");
  const caseless = (s: string) => s.replace(/[A-Za-z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
  const segs = p.split(/[\\/]+/);
  // A UNC root (`\\server\share`) starts with two separators, four when JSON-escaped.
  const lead = segs[0] === "" ? "[\\\\/]{2,4}" : "";
  return lead + segs.filter((seg, i) => i > 0 || seg !== "").map((seg) => caseless(escapeRegex(seg))).join(WIN_SEP);
}

interface Entry {
  placeholder: string;
  sibling: boolean;
  source: string;
}

export class Redactor {
  private readonly root: string;
  private readonly rootMatchers: Array<{ re: RegExp; windows: boolean }>;
  private readonly entries: Entry[];
  private readonly textPattern: RegExp | null;
  private readonly secrets: string[];

  /**
   * `root` is the workdir's absolute host path; `secrets` are literal values never to show;
   * `hostRoots` are the Bridge's other host directories (host-roots.ts). The most specific root
   * wins, so the workdir inside home stays `<workdir>/…` and the state dir inside home is `<state>`.
   */
  constructor(root: string, secrets: readonly string[] = [], hostRoots: readonly HostRoot[] = []) {
    this.root = root.length > 1 ? root.replace(/[\\/]+$/, "") : root;
    const workdirVariants = rootVariants(root);
    this.rootMatchers = workdirVariants.map((v) => {
      const windows = isWindowsStyle(v);
      return { re: new RegExp(`^${rootPattern(v)}(?:${windows ? "[\\\\/]" : "/"}(.*))?$`, "s"), windows };
    });
    const ranked: Array<{ path: string; placeholder: string }> = [
      ...workdirVariants.map((path) => ({ path, placeholder: WORKDIR })),
      ...hostRoots.flatMap((r) => rootVariants(r.path).map((path) => ({ path, placeholder: r.placeholder }))),
    ];
    ranked.sort((a, b) => b.path.length - a.path.length || (RANK[a.placeholder] ?? 9) - (RANK[b.placeholder] ?? 9));
    const seen = new Set<string>();
    this.entries = [];
    for (const r of ranked) {
      const key = isWindowsStyle(r.path) ? r.path.toLowerCase().replace(/\\/g, "/") : r.path;
      if (seen.has(key)) continue;
      seen.add(key);
      const pat = rootPattern(r.path);
      this.entries.push({ placeholder: r.placeholder, sibling: false, source: `${pat}(?!${SIBLING_AHEAD})` });
      // A workdir sibling (`/srv/repo2`) says it is outside; other roots' siblings fall through to a
      // shorter root (`/home/a/.state-old` is still `<home>/.state-old`).
      if (r.placeholder === WORKDIR) this.entries.push({ placeholder: OUTSIDE, sibling: true, source: `${pat}${SIBLING_AHEAD}[${NAME}.]*` });
    }
    this.textPattern = this.entries.length === 0 ? null : new RegExp(`(?:${this.entries.map((e) => `(${e.source})`).join("|")})${TAIL}`, "g");
    this.secrets = secrets.filter((s) => s.length >= 6);
  }

  /** Workdir-relative form of an absolute path, "." for the root, or <outside-workdir>. */
  relative(p: string): string {
    if (p === this.root) return ".";
    for (const { re, windows } of this.rootMatchers) {
      const m = re.exec(p);
      if (!m) continue;
      // On POSIX a backslash is a name character, not a separator.
      const rel = (windows ? (m[1] ?? "").replace(/\\/g, "/") : (m[1] ?? "")).replace(/^\/+/, "").replace(/\/+$/, "");
      if (rel.split("/").includes("..")) return OUTSIDE;
      return rel.length === 0 ? "." : rel;
    }
    return OUTSIDE;
  }

  /** Free text: each root token becomes its placeholder plus the tail; workdir siblings <outside-workdir>. */
  text(s: string): string {
    const n = this.entries.length;
    let out =
      this.textPattern === null
        ? s
        : s.replace(this.textPattern, (match: string, ...groups: unknown[]) => {
            const idx = groups.findIndex((g, i) => i < n && g !== undefined);
            const entry = this.entries[idx]!;
            const tail = (groups[n] as string | undefined) ?? "";
            if (entry.sibling) return OUTSIDE + trailingPunct(match);
            const punct = trailingPunct(tail);
            const body = punct ? tail.slice(0, -punct.length) : tail;
            const rel = body.replace(/^[\\/]+/, "").replace(/[\\/]+$/, "");
            if (rel.split(/[\\/]+/).includes("..")) return OUTSIDE + punct;
            // A JSON-escaped Windows path keeps its doubled backslashes; POSIX runs collapse to one "/".
            const sep = body.startsWith("\\") ? /^\\+/.exec(body)![0] : "/";
            return (rel.length === 0 ? entry.placeholder : `${entry.placeholder}${sep}${rel}`) + punct;
          });
    for (const secret of this.secrets) out = out.split(secret).join("<redacted>");
    for (const re of SECRET_PATTERNS) {
      out = out.replace(re, (m, prefix?: string) => (typeof prefix === "string" ? `${prefix}<redacted>` : "<redacted>"));
    }
    return out;
  }

  /** A value that may be a path: absolute → relative form, else treated as text. */
  private pathValue(v: string): string {
    return isAbsolute(v) ? this.relative(v) : this.text(v);
  }

  value(v: unknown, key?: string): unknown {
    if (typeof v === "string") {
      if (key !== undefined && PATH_KEYS.has(key)) return this.pathValue(v);
      if (isAbsolute(v) && !/\s/.test(v)) return this.relative(v);
      return this.text(v);
    }
    if (Array.isArray(v)) {
      if (key !== undefined && PATH_LIST_KEYS.has(key)) {
        return v.map((x) => (typeof x === "string" ? this.pathValue(x) : this.value(x)));
      }
      return v.map((x) => this.value(x));
    }
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (DROPPED_KEYS.has(k)) continue;
        out[k] = this.value(x, k);
      }
      return out;
    }
    return v;
  }

  payload(p: Record<string, unknown>): Record<string, unknown> {
    return this.value(p) as Record<string, unknown>;
  }
}

function isAbsolute(s: string): boolean {
  return s.startsWith("/") || /^[A-Za-z]:[\\/]/.test(s) || s.startsWith("\\\\");
}

function trailingPunct(tail: string): string {
  const m = /[.!?:]+$/.exec(tail);
  return m ? m[0] : "";
}
