// Every workflow under .github/workflows/ passes yamllint (relaxed rules, lines up to 200
// characters): GitHub refuses a workflow that is not valid YAML only when it runs, on a tag for
// release.yml. .ci/run installs yamllint from Debian; without it this file cannot check anything.
import { expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { REPO } from "../support/proc.ts";

const WORKFLOWS = path.join(REPO, ".github/workflows");
const yamllint = Bun.which("yamllint");
const RULES = "{extends: relaxed, rules: {line-length: {max: 200}}}";

test("the workflows include the release workflow", () => {
  const names = fs.readdirSync(WORKFLOWS).filter((n) => n.endsWith(".yml")).sort();
  expect(names).toContain("release.yml");
  expect(names.length).toBeGreaterThanOrEqual(4);
});

// Skipped only where yamllint is not installed (apt-get install yamllint; .ci/run does).
test.skipIf(yamllint === null)("yamllint passes every workflow, and fails a broken one", () => {
  const files = fs.readdirSync(WORKFLOWS).filter((n) => n.endsWith(".yml")).map((n) => path.join(WORKFLOWS, n));
  const r = Bun.spawnSync([yamllint!, "-f", "parsable", "-d", RULES, ...files], { stdout: "pipe", stderr: "pipe" });
  expect(r.stdout.toString() + r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
  // The check can fail: the plain-scalar mistake macos.yml once had (a ': ' inside a plain value).
  const broken = Bun.spawnSync([yamllint!, "-f", "parsable", "-d", RULES, "-"], {
    stdin: new TextEncoder().encode("jobs:\n  a:\n    steps:\n      - run: echo a: b\n"),
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(broken.exitCode).toBe(1);
  expect(broken.stdout.toString()).toContain("syntax error");
});
