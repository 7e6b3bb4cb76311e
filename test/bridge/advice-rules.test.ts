// The advice rule engine on a table of cases: the documented built-in rules, operator rules
// (first match wins, before the built-ins), the mapping of a recommended kind to an option the
// request actually offers, and that advising reads a request without changing it.
import { describe, expect, test } from "bun:test";
import { Advisor, type Advice } from "../../src/bridge/service/advice.ts";
import { normalizeAdviceRules, type RawAdviceRule } from "../../src/config/advice-rules.ts";
import type { ApprovalRequest } from "../../src/runtimes/types.ts";

const FOUR = [
  { option_id: "opt-once", label: "Allow once", kind: "allow_once" as const },
  { option_id: "opt-always", label: "Always allow", kind: "allow_always" as const },
  { option_id: "opt-reject", label: "Reject", kind: "reject_once" as const },
  { option_id: "opt-never", label: "Never allow", kind: "reject_always" as const },
];
const task = { runtime: "acp-fixture", relativeCwd: "." };

function acpCommand(command: string, options = FOUR): ApprovalRequest {
  return { category: "command", title: "Run", available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"], response_options: options, tool: "execute", tool_input: JSON.stringify({ command }) };
}
function acpEdit(paths: string[]): ApprovalRequest {
  return { category: "file_change", title: "Write", available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"], response_options: FOUR, file_changes: paths.map((p) => ({ path: p })) };
}
function nativeCommand(command: string, decisions: ApprovalRequest["available_decisions"] = ["approve_once", "approve_session", "deny", "cancel_task"]): ApprovalRequest {
  return { category: "command", title: "Run", available_decisions: decisions, command_display: command };
}

function rules(raw: RawAdviceRule[]): Advisor {
  const problems: string[] = [];
  const normalized = normalizeAdviceRules(raw, (p, why) => problems.push(`${p.join(".")}: ${why}`));
  expect(problems).toEqual([]);
  return new Advisor(normalized);
}

const builtins = new Advisor([]);
const pick = (a: Advice) => ({ option_id: a.option_id, rule: a.rule });

describe("built-in rules", () => {
  const cases: Array<[string, ApprovalRequest, { option_id: string | null; rule: string }]> = [
    ["an edit inside the workdir: allow once", acpEdit(["src/a.ts"]), { option_id: "opt-once", rule: "builtin:edit-inside-workdir" }],
    ["an edit of a path outside the workdir: reject", acpEdit(["src/a.ts", "<outside-workdir>"]), { option_id: "opt-reject", rule: "builtin:outside-workdir" }],
    ["an edit that climbs out with ..: reject", acpEdit(["../x"]), { option_id: "opt-reject", rule: "builtin:outside-workdir" }],
    ["curl reaches the network: reject", acpCommand("curl -sS https://example.com"), { option_id: "opt-reject", rule: "builtin:network" }],
    ["git push reaches the network", acpCommand("git push origin main"), { option_id: "opt-reject", rule: "builtin:network" }],
    ["a wrapped network program still counts", acpCommand("FOO=1 sudo -E wget x"), { option_id: "opt-reject", rule: "builtin:network" }],
    ["a network program after a pipe", acpCommand("cat a.txt | nc host 80"), { option_id: "opt-reject", rule: "builtin:network" }],
    ["npm install reaches the network", nativeCommand("npm install left-pad"), { option_id: "deny", rule: "builtin:network" }],
    ["a URL in a command", acpCommand("python fetch.py http://host/x"), { option_id: "opt-reject", rule: "builtin:network" }],
    ["a command naming /etc: outside", acpCommand("cat /etc/passwd"), { option_id: "opt-reject", rule: "builtin:outside-workdir" }],
    ["a command naming ~: outside", nativeCommand("ls ~/.ssh"), { option_id: "deny", rule: "builtin:outside-workdir" }],
    ["a command naming another host root: outside", acpCommand("cat <home>/.netrc"), { option_id: "opt-reject", rule: "builtin:outside-workdir" }],
    ["a command with --out=/abs: outside", acpCommand("tool --out=/var/x"), { option_id: "opt-reject", rule: "builtin:outside-workdir" }],
    ["a command inside the workdir: no advice", acpCommand("cat <workdir>/src/a.ts"), { option_id: null, rule: "builtin:no-match" }],
    ["a program's own absolute path is not a named path", acpCommand("/usr/bin/make test"), { option_id: null, rule: "builtin:no-match" }],
    ["2>/dev/null is harmless", acpCommand("make test 2>/dev/null"), { option_id: null, rule: "builtin:no-match" }],
    ["git status stays local", acpCommand("git status"), { option_id: null, rule: "builtin:no-match" }],
    ["a network permission request: reject", { category: "network_permission", title: "fetch", available_decisions: ["approve_once", "deny", "cancel_task"] }, { option_id: "deny", rule: "builtin:network" }],
    ["a provider permission: no advice", { category: "provider_permission", title: "x", available_decisions: ["approve_once", "deny", "cancel_task"] }, { option_id: null, rule: "builtin:no-match" }],
    ["reject advised but only allow offered: null, never another option", acpCommand("curl x", [FOUR[0]!]), { option_id: null, rule: "builtin:network" }],
  ];
  for (const [name, request, want] of cases) {
    test(name, () => {
      expect(pick(builtins.adviseApproval(request, task))).toEqual(want);
    });
  }

  test("a relative path resolves against the task's directory", () => {
    const inSub = { runtime: "acp-fixture", relativeCwd: "sub" };
    expect(pick(builtins.adviseApproval(acpCommand("cat ../a.txt"), inSub))).toEqual({ option_id: null, rule: "builtin:no-match" });
    expect(pick(builtins.adviseApproval(acpCommand("cat ../../a.txt"), inSub))).toEqual({ option_id: "opt-reject", rule: "builtin:outside-workdir" });
  });

  test("a question is advised with option_id null", () => {
    expect(builtins.adviseQuestion(task)).toEqual({ option_id: null, reason: "a question offers no options to recommend", rule: "builtin:question" });
  });

  test("every reason is text without the request's outside paths", () => {
    const a = builtins.adviseApproval(acpCommand("cat /etc/shadow"), task);
    expect(a.reason).toBe("the request names a path outside the workdir: reject_once");
    expect(a.reason).not.toContain("/etc");
  });
});

describe("operator rules", () => {
  test("first match wins, and operator rules come before the built-ins", () => {
    const advisor = rules([
      { name: "tests", kind: "command", command_prefix: "make test", advise: "allow_always", reason: "the test suite is safe" },
      { name: "pushes", command_regex: "^git push", advise: "none" },
      { name: "any-make", command_prefix: "make", advise: "reject_once" },
    ]);
    expect(advisor.adviseApproval(acpCommand("make test"), task)).toEqual({ option_id: "opt-always", reason: "the test suite is safe: allow_always", rule: "tests" });
    // Prefixes match whole words: "make testall" is not "make test".
    expect(pick(advisor.adviseApproval(acpCommand("make testall"), task))).toEqual({ option_id: "opt-reject", rule: "any-make" });
    // "none" silences the network built-in for pushes.
    expect(pick(advisor.adviseApproval(acpCommand("git push origin"), task))).toEqual({ option_id: null, rule: "pushes" });
    expect(pick(advisor.adviseApproval(acpCommand("curl x"), task))).toEqual({ option_id: "opt-reject", rule: "builtin:network" });
  });

  test("paths: every named path inside the workdir matches a glob; an outside path never matches", () => {
    const advisor = rules([{ name: "docs", kind: "file_change", paths: ["docs/**", "*.md"], advise: "allow_always" }]);
    expect(pick(advisor.adviseApproval(acpEdit(["docs/a/b.md", "README.md"]), task))).toEqual({ option_id: "opt-always", rule: "docs" });
    expect(pick(advisor.adviseApproval(acpEdit(["docs/a.md", "src/x.ts"]), task))).toEqual({ option_id: "opt-once", rule: "builtin:edit-inside-workdir" });
    expect(pick(advisor.adviseApproval(acpEdit(["docs/a.md", "<outside-workdir>"]), task))).toEqual({ option_id: "opt-reject", rule: "builtin:outside-workdir" });
  });

  test("runtime and kind narrow a rule; a native request maps kinds to its decisions", () => {
    const advisor = rules([{ name: "codex-cmds", runtime: "codex", kind: "command", advise: "allow_once" }]);
    expect(pick(advisor.adviseApproval(nativeCommand("ls"), { runtime: "codex", relativeCwd: "." }))).toEqual({ option_id: "approve_once", rule: "codex-cmds" });
    expect(pick(advisor.adviseApproval(nativeCommand("ls"), { runtime: "claude", relativeCwd: "." }))).toEqual({ option_id: null, rule: "builtin:no-match" });
    // approve_once not offered: no advice rather than a different decision.
    expect(pick(advisor.adviseApproval(nativeCommand("ls", ["deny", "cancel_task"]), { runtime: "codex", relativeCwd: "." }))).toEqual({ option_id: null, rule: "codex-cmds" });
  });

  test("a regex is RE2 and searched anywhere unless anchored", () => {
    const advisor = rules([{ name: "rg", command_regex: "\\brg\\b", advise: "allow_once" }]);
    expect(pick(advisor.adviseApproval(acpCommand("cd src && rg foo"), task))).toEqual({ option_id: "opt-once", rule: "rg" });
    expect(pick(advisor.adviseApproval(acpCommand("grep foo"), task))).toEqual({ option_id: null, rule: "builtin:no-match" });
  });

  test("a question rule gives its reason, option_id null; an unnamed rule is named by its position", () => {
    const advisor = rules([{ kind: "question", advise: "none", reason: "answer questions yourself" }]);
    expect(advisor.adviseQuestion(task)).toEqual({ option_id: null, reason: "answer questions yourself", rule: "agent.advice_rules[0]" });
  });

  test("advising never changes the request it reads", () => {
    const request = acpEdit(["src/a.ts"]);
    const frozen = deepFreeze(structuredClone(request));
    const advisor = rules([{ name: "all", advise: "allow_always" }]);
    expect(pick(advisor.adviseApproval(frozen, task))).toEqual({ option_id: "opt-always", rule: "all" });
    expect(frozen).toEqual(request);
  });
});

describe("rule validation", () => {
  const problemsOf = (raw: RawAdviceRule[]) => {
    const out: string[] = [];
    normalizeAdviceRules(raw, (p, why) => out.push(`${p.join(".")}: ${why}`));
    return out;
  };
  test("each bad rule names its key", () => {
    expect(
      problemsOf([
        { name: "a", command_regex: "(", advise: "allow_once" },
        { name: "a", paths: ["/etc/**", "x/../y", ""], advise: "allow_once" },
        { kind: "question", command_prefix: "x", advise: "allow_once" },
        { paths: [], command_prefix: "", advise: "none" },
      ]),
    ).toEqual([
      "agent.advice_rules.0.command_regex: not a valid RE2 regular expression",
      "agent.advice_rules.1.name: duplicate rule name 'a'",
      "agent.advice_rules.1.paths.0: a path glob is relative to the workdir (no leading '/', '~' or drive)",
      "agent.advice_rules.1.paths.1: a path glob must not contain a '..' segment",
      "agent.advice_rules.1.paths.2: a path glob must not be empty",
      "agent.advice_rules.2.advise: a question offers no options to recommend: use advise = \"none\"",
      "agent.advice_rules.2.command_prefix: a question names no command or path: this matcher can never match it",
      "agent.advice_rules.3.command_prefix: command_prefix must not be empty",
      "agent.advice_rules.3.paths: must list at least one glob (leave the key out to match any path)",
    ]);
  });
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe("the advisor cannot answer", () => {
  test("advice.ts imports nothing that resolves, stores or sends anything", () => {
    const source = require("node:fs").readFileSync(require("node:path").join(import.meta.dir, "../../src/bridge/service/advice.ts"), "utf8") as string;
    const imports = [...source.matchAll(/^import [^"]*"([^"]+)";$/gm)].map((m) => m[1]).sort();
    // Pure helpers only: no broker, store, task run, adapter, IPC or RPC module.
    expect(imports).toEqual(["../../common/canonical-json.ts", "../../config/advice-rules.ts", "../../config/types.ts", "../../fs/glob.ts", "../../runtimes/types.ts", "node:crypto", "node:path"]);
  });
});
