// `[[agent.advice_rules]]` through the real loader: a valid table becomes the registry's rules
// in order (with defaults), and every wrong key is one CONFIGURATION_ERROR problem naming it.
import { afterAll, expect, test } from "bun:test";
import { cleanupTempDirs, load, problems, toml, wd } from "./helpers.ts";

afterAll(cleanupTempDirs);

test("rules load in order, unnamed ones named by position, absent matchers null", async () => {
  const input = toml(
    `${wd("w")}[[agent.advice_rules]]\nname = "tests"\nkind = "command"\ncommand_regex = "^make (test|check)$"\nadvise = "allow_once"\n` +
      `[[agent.advice_rules]]\npaths = ["docs/**"]\nruntime = "acp-gemini"\nadvise = "allow_always"\nreason = "docs are cheap"\n`,
  );
  const { registry } = await load(input);
  expect(registry.agent.advice_rules).toEqual([
    { name: "tests", kind: "command", command_prefix: null, command_regex: "^make (test|check)$", paths: null, runtime: null, advise: "allow_once", reason: null },
    { name: "agent.advice_rules[1]", kind: null, command_prefix: null, command_regex: null, paths: ["docs/**"], runtime: "acp-gemini", advise: "allow_always", reason: "docs are cheap" },
  ]);
});

test("no rules: an empty list", async () => {
  expect((await load(toml(wd("w")))).registry.agent.advice_rules).toEqual([]);
});

test("shape and rule problems name the key; an unknown key gets did-you-mean", async () => {
  const input = toml(
    `${wd("w")}[[agent.advice_rules]]\nadvise = "approve"\ncomand_prefix = "x"\n` +
      `[[agent.advice_rules]]\nname = "1bad"\nkind = "shell"\nadvise = "none"\n` +
      `[[agent.advice_rules]]\ncommand_regex = "a(?P<n>"\npaths = ["../up"]\nadvise = "reject_once"\n`,
  );
  const lines = (await problems(input)).map((l) => l.slice(l.indexOf(": ") + 2));
  expect(lines).toEqual([
    `agent.advice_rules[0].advise: expected "allow_always", "allow_once", "none", "reject_always" or "reject_once", got a string`,
    "agent.advice_rules[0].comand_prefix: unknown key (did you mean 'command_prefix'?)",
    `agent.advice_rules[1].kind: expected "command", "file_change", "mcp_tool", "network_permission", "other", "provider_permission" or "question", got a string`,
    "agent.advice_rules[1].name: expected a rule name: a letter, then up to 63 letters, digits, '_', '.' or '-', got a string",
  ]);
  const second = toml(`${wd("w")}[[agent.advice_rules]]\ncommand_regex = "a(?P<n>"\npaths = ["../up"]\nadvise = "reject_once"\n`);
  expect((await problems(second)).map((l) => l.slice(l.indexOf(": ") + 2))).toEqual([
    "agent.advice_rules[0].command_regex: not a valid RE2 regular expression",
    "agent.advice_rules[0].paths[0]: a path glob must not contain a '..' segment",
  ]);
});
