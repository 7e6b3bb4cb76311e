// Approval advice (docs/agent-bridge.md, "Approval advice"): deterministic rules that recommend at
// most one option the request actually offers. Advisory only, by construction: this module is
// pure (a request payload in, an Advice value out). It imports nothing that can answer, resolve,
// persist or change policy, and it never writes to the payload it reads; the broker stores the
// advice beside the request and the human still decides. Operator rules come first, the built-in
// rules after them, and the first rule that matches gives the advice.
import { createHash } from "node:crypto";
import * as path from "node:path";
import { canonicalJson } from "../../common/canonical-json.ts";
import { compileRe2 } from "../../config/advice-rules.ts";
import type { AdviceChoice, AdviceKind, AdviceRule } from "../../config/types.ts";
import { compilePathGlob, type GlobMatcher } from "../../fs/glob.ts";
import type { ApprovalDecision, ApprovalRequest, ResponseOptionKind } from "../../runtimes/types.ts";

/** What a pending approval or question carries. `option_id` is one the request offers, or null. */
export interface Advice {
  option_id: string | null;
  reason: string;
  rule: string;
}

/** The task facts a rule may match besides the request itself. */
export interface AdviceTask {
  runtime: string;
  /** The task's start directory, relative to the workdir root ("." for the root). */
  relativeCwd: string;
}

/** The built-in rules, in the order they are tried (after the operator's). */
export const BUILTIN_RULES = ["builtin:outside-workdir", "builtin:network", "builtin:edit-inside-workdir", "builtin:no-match"] as const;
export const QUESTION_RULE = "builtin:question";

/** Programs that reach the network whatever their arguments. */
const NETWORK_PROGRAMS = new Set(["curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "ping", "dig", "nslookup", "http", "https", "aria2c", "npx", "bunx", "pnpx"]);
/** Programs whose named subcommand reaches the network. */
const NETWORK_SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  git: new Set(["clone", "fetch", "pull", "push", "ls-remote", "submodule"]),
  npm: new Set(["install", "i", "ci", "add", "update", "publish"]),
  pnpm: new Set(["install", "i", "add", "update", "publish", "dlx"]),
  yarn: new Set(["install", "add", "upgrade", "publish", "dlx"]),
  bun: new Set(["install", "i", "add", "update", "publish", "x"]),
  pip: new Set(["install", "download"]),
  pip3: new Set(["install", "download"]),
  uv: new Set(["pip", "add", "sync"]),
  cargo: new Set(["install", "publish", "fetch", "update"]),
  go: new Set(["get", "install", "mod"]),
  gem: new Set(["install"]),
  "apt-get": new Set(["install", "update", "upgrade"]),
  apt: new Set(["install", "update", "upgrade"]),
  brew: new Set(["install", "update", "upgrade"]),
  docker: new Set(["pull", "push", "login"]),
};
/** Words that run the next word as the program. */
const WRAPPERS = new Set(["sudo", "env", "nohup", "time", "exec", "command", "nice"]);
const PLACEHOLDER_WORKDIR = "<workdir>";
const PLACEHOLDER_OUTSIDE = "<outside-workdir>";
/** Paths any command may name without leaving the workdir in any way that matters. */
const HARMLESS_PATHS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"]);
const MAX_REASON_CHARS = 512;
/** A redirection in front of a word (`2>`, `>>`, `<`), but not a redactor placeholder such as `<home>`. */
const REDIRECTION = /^(?!<(?:workdir|outside-workdir|home|state|tmp|provider-config)>)[0-9]*[<>]+&?/;

/** What the rules look at, read once from a (redacted) request. */
interface RequestFacts {
  kind: AdviceKind;
  command: string | null;
  /** Workdir-relative paths the request names inside the workdir. */
  inside: string[];
  outside: boolean;
  /** Why the command reaches the network, or null. */
  network: string | null;
}

/**
 * A path as the redactor left it: inside the workdir it is relative or `<workdir>/rel`; anything
 * absolute, under another host root placeholder, under `~`, or climbing out with `..` is outside.
 * Relative paths resolve against `base` (the task's directory for commands, the root for paths).
 */
function placePath(p: string, base: string): { inside: string } | "outside" {
  if (HARMLESS_PATHS.has(p)) return { inside: "" };
  let rel: string;
  if (p === PLACEHOLDER_WORKDIR) rel = ".";
  else if (p.startsWith(`${PLACEHOLDER_WORKDIR}/`) || p.startsWith(`${PLACEHOLDER_WORKDIR}\\`)) rel = p.slice(PLACEHOLDER_WORKDIR.length + 1);
  else if (p === PLACEHOLDER_OUTSIDE || p.startsWith("<") || p.startsWith("~") || p.startsWith("/") || p.startsWith("\\") || /^[A-Za-z]:/.test(p)) return "outside";
  else rel = path.posix.join(base, p);
  const normal = path.posix.normalize(rel.replaceAll("\\", "/"));
  if (normal === ".." || normal.startsWith("../")) return "outside";
  return { inside: normal === "." ? "." : normal.replace(/\/+$/, "") };
}

/** Shell-ish words of a command: quotes dropped, operators split off. Not a shell parser: a heuristic that only recommends. */
function segments(command: string): string[][] {
  const out: string[][] = [];
  for (const part of command.split(/\|\||&&|[;|&\n()]/)) {
    const words = part
      .split(/\s+/)
      .map((w) => w.replace(/["'`]/g, "").replace(REDIRECTION, ""))
      .filter((w) => w.length > 0);
    if (words.length > 0) out.push(words);
  }
  return out;
}

function programIndex(words: readonly string[]): number {
  let i = 0;
  while (i < words.length && (WRAPPERS.has(words[i]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || (i > 0 && words[i]!.startsWith("-") && WRAPPERS.has(words[i - 1]!)))) i++;
  return i;
}

function networkReason(command: string): string | null {
  for (const words of segments(command)) {
    const at = programIndex(words);
    const program = path.posix.basename(words[at] ?? "");
    if (NETWORK_PROGRAMS.has(program)) return `the command runs ${program}, which reaches the network`;
    const sub = NETWORK_SUBCOMMANDS[program];
    const next = words.slice(at + 1).find((w) => !w.startsWith("-"));
    if (sub && next !== undefined && sub.has(next)) return `the command runs ${program} ${next}, which reaches the network`;
  }
  if (/[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(command)) return "the command names a URL";
  return null;
}

function commandPaths(command: string, cwd: string, facts: RequestFacts): void {
  for (const words of segments(command)) {
    const at = programIndex(words);
    words.forEach((word, i) => {
      if (i <= at) return;
      const value = word.startsWith("-") ? (word.includes("=") ? word.slice(word.indexOf("=") + 1) : "") : word;
      if (value.length === 0 || value.includes("://")) return;
      if (!(value.includes("/") || value.includes("\\") || value.startsWith("~") || value === ".." || value.startsWith("<"))) return;
      const placed = placePath(value, cwd);
      if (placed === "outside") facts.outside = true;
      else if (placed.inside !== "") facts.inside.push(placed.inside);
    });
  }
}

/** The command an approval is about: native runtimes give command_display, ACP agents a tool input. */
function commandOf(p: Readonly<ApprovalRequest>): string | null {
  if (typeof p.command_display === "string" && p.command_display.trim() !== "") return p.command_display.trim();
  if (p.category !== "command" || typeof p.tool_input !== "string") return null;
  let input: unknown;
  try {
    input = JSON.parse(p.tool_input);
  } catch {
    return p.tool_input.trim() || null;
  }
  if (typeof input === "string") return input.trim() || null;
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    for (const key of ["command", "cmd"]) {
      const v = o[key];
      if (typeof v === "string" && v.trim() !== "") return v.trim();
      if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string")) return (v as string[]).join(" ");
    }
  }
  return null;
}

export function approvalFacts(p: Readonly<ApprovalRequest>, task: AdviceTask): RequestFacts {
  const command = commandOf(p);
  const facts: RequestFacts = { kind: p.category, command, inside: [], outside: false, network: null };
  const named = [...(Array.isArray(p.file_changes) ? p.file_changes.map((f) => f?.path) : []), p.blocked_path];
  for (const n of named) {
    if (typeof n !== "string" || n.length === 0) continue;
    const placed = placePath(n, ".");
    if (placed === "outside") facts.outside = true;
    else if (placed.inside !== "") facts.inside.push(placed.inside);
  }
  if (command !== null) {
    commandPaths(command, task.relativeCwd, facts);
    facts.network = networkReason(command);
  }
  if (facts.network === null && p.category === "network_permission") facts.network = "the agent asks for network access";
  return facts;
}

const OPTION_DECISION: Record<ResponseOptionKind, ApprovalDecision> = {
  allow_once: "approve_once",
  allow_always: "approve_session",
  reject_once: "deny",
  reject_always: "deny",
};

/**
 * The option a choice names among those offered: the first offered option of that ACP kind, or
 * (for a request answered by decision) the matching decision. Null when nothing offered fits:
 * advice never names an option the request does not offer.
 */
export function offeredOption(p: Readonly<ApprovalRequest>, choice: AdviceChoice): string | null {
  if (choice === "none") return null;
  if (Array.isArray(p.response_options) && p.response_options.length > 0) {
    return p.response_options.find((o) => o.kind === choice)?.option_id ?? null;
  }
  const decision = OPTION_DECISION[choice];
  return (p.available_decisions ?? []).includes(decision) ? decision : null;
}

function bounded(reason: string): string {
  return reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason;
}

interface CompiledRule {
  rule: AdviceRule;
  regex: { test(text: string): boolean } | null;
  globs: GlobMatcher[] | null;
}

function describe(rule: AdviceRule): string {
  const parts: string[] = [];
  if (rule.kind !== null) parts.push(`kind ${rule.kind}`);
  if (rule.runtime !== null) parts.push(`runtime ${rule.runtime}`);
  if (rule.command_prefix !== null) parts.push("command prefix");
  if (rule.command_regex !== null) parts.push("command pattern");
  if (rule.paths !== null) parts.push("paths");
  return `the configured rule matched (${parts.length > 0 ? parts.join(", ") : "any request"})`;
}

function prefixMatches(command: string, prefix: string): boolean {
  if (!command.startsWith(prefix)) return false;
  if (command.length === prefix.length || /\s$/.test(prefix)) return true;
  return /\s/.test(command[prefix.length]!);
}

/** What the task manifest records about advice: on, advisory only, and exactly which rules are in force. */
export function adviceManifest(rules: readonly AdviceRule[]): Record<string, unknown> {
  return {
    enabled: true,
    mode: "advisory",
    answers_requests: false,
    rules: rules.map((r) => r.name),
    rules_sha256: createHash("sha256").update(canonicalJson(rules), "utf8").digest("hex"),
    builtin_rules: [...BUILTIN_RULES, QUESTION_RULE],
  };
}

export class Advisor {
  private readonly rules: CompiledRule[];

  constructor(rules: readonly AdviceRule[]) {
    this.rules = rules.map((rule) => ({
      rule,
      regex: rule.command_regex === null ? null : compileRe2(rule.command_regex),
      globs: rule.paths === null ? null : rule.paths.map((g) => compilePathGlob(g)),
    }));
  }

  private matches(c: CompiledRule, facts: RequestFacts, task: AdviceTask): boolean {
    const { rule } = c;
    if (rule.runtime !== null && rule.runtime !== task.runtime) return false;
    if (rule.kind !== null && rule.kind !== facts.kind) return false;
    if (rule.command_prefix !== null && (facts.command === null || !prefixMatches(facts.command, rule.command_prefix))) return false;
    if (c.regex !== null && (facts.command === null || !c.regex.test(facts.command))) return false;
    if (c.globs !== null) {
      if (facts.outside || facts.inside.length === 0) return false;
      if (!facts.inside.every((p) => c.globs!.some((g) => g.test(p)))) return false;
    }
    return true;
  }

  adviseApproval(p: Readonly<ApprovalRequest>, task: AdviceTask): Advice {
    const facts = approvalFacts(p, task);
    for (const c of this.rules) {
      if (c.rule.kind === "question" || !this.matches(c, facts, task)) continue;
      return this.fromChoice(p, c.rule.advise, c.rule.reason ?? describe(c.rule), c.rule.name);
    }
    if (facts.outside) return this.fromChoice(p, "reject_once", "the request names a path outside the workdir", "builtin:outside-workdir");
    if (facts.network !== null) return this.fromChoice(p, "reject_once", facts.network, "builtin:network");
    if (facts.kind === "file_change" && facts.inside.length > 0) {
      return this.fromChoice(p, "allow_once", `an edit inside the workdir (${facts.inside.slice(0, 3).join(", ")}${facts.inside.length > 3 ? ", …" : ""})`, "builtin:edit-inside-workdir");
    }
    return { option_id: null, reason: "no rule matched: decide on the request itself", rule: "builtin:no-match" };
  }

  /** A question offers no options: its advice is always null, with the rule that says so. */
  adviseQuestion(task: AdviceTask): Advice {
    const facts: RequestFacts = { kind: "question", command: null, inside: [], outside: false, network: null };
    for (const c of this.rules) {
      if (c.rule.kind !== "question" && c.rule.kind !== null) continue;
      if (c.rule.command_prefix !== null || c.rule.command_regex !== null || c.rule.paths !== null) continue;
      if (!this.matches(c, facts, task)) continue;
      return { option_id: null, reason: bounded(c.rule.reason ?? describe(c.rule)), rule: c.rule.name };
    }
    return { option_id: null, reason: "a question offers no options to recommend", rule: QUESTION_RULE };
  }

  private fromChoice(p: Readonly<ApprovalRequest>, choice: AdviceChoice, reason: string, rule: string): Advice {
    const option = offeredOption(p, choice);
    if (choice === "none") return { option_id: null, reason: bounded(reason), rule };
    if (option === null) return { option_id: null, reason: bounded(`${reason}; it advises ${choice}, which this request does not offer`), rule };
    return { option_id: option, reason: bounded(`${reason}: ${choice}`), rule };
  }
}
