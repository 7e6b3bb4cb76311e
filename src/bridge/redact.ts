// Host-path and secret redaction for everything a caller can read back: event payloads,
// interaction payloads, final responses and error messages (agent-reference §5.2).
// A workdir path becomes workdir-relative ("." for the root) or "<outside-workdir>"; free text
// shows "<workdir>/rel". Native provider ids are dropped from payloads.

const DROPPED_KEYS = new Set(["native_session_id", "native_turn_id", "thread_id", "turn_id"]);
const PATH_KEYS = new Set(["path", "cwd", "relative_cwd", "host_path", "file_path", "grantRoot"]);
const PATH_LIST_KEYS = new Set(["read", "write", "readableRoots", "writableRoots"]);
export const OUTSIDE = "<outside-workdir>";

// Credential shapes that must never be echoed back, even if a provider prints them.
const SECRET_PATTERNS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abpr]-[A-Za-z0-9-]{10,}/g,
  /(\b[Bb]earer\s+)[A-Za-z0-9._~+/=-]{12,}/g,
];

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export class Redactor {
  private readonly root: string;
  private readonly textPattern: RegExp;
  private readonly secrets: string[];

  /** `root` is the workdir's absolute host path; `secrets` are literal values never to show. */
  constructor(root: string, secrets: readonly string[] = []) {
    this.root = root.length > 1 ? root.replace(/\/+$/, "") : root;
    // The root as a token: followed by a path tail, or by a sibling suffix (e.g. /repo2), or nothing.
    this.textPattern = new RegExp(`${escapeRegex(this.root)}([A-Za-z0-9_.-]*)((?:/[^\\s"'\`<>()\\[\\]{},;]*)?)`, "g");
    this.secrets = secrets.filter((s) => s.length >= 6);
  }

  /** Workdir-relative form of an absolute path, "." for the root, or <outside-workdir>. */
  relative(p: string): string {
    if (p === this.root) return ".";
    if (p.startsWith(`${this.root}/`)) {
      const rel = p.slice(this.root.length + 1).replace(/\/+$/, "");
      if (rel.split("/").includes("..")) return OUTSIDE;
      return rel.length === 0 ? "." : rel;
    }
    return OUTSIDE;
  }

  /** Free text: root tokens become <workdir>/rel, sibling-prefix tokens <outside-workdir>. */
  text(s: string): string {
    let out = s.replace(this.textPattern, (_m, sibling: string, tail: string) => {
      if (sibling.length > 0) return OUTSIDE + trailingPunct(tail);
      const punct = trailingPunct(tail);
      const body = punct ? tail.slice(0, -punct.length) : tail;
      const rel = body.replace(/^\/+/, "").replace(/\/+$/, "");
      if (rel.split("/").includes("..")) return OUTSIDE + punct;
      return (rel.length === 0 ? "<workdir>" : `<workdir>/${rel}`) + punct;
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
