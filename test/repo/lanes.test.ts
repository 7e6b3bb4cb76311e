// The lists of .ci/run's lanes name files that exist, and `npm run test:agents` runs exactly the
// agents lane's files: a suite renamed or added on one side only would silently drop out of CI or
// out of the command the README gives.
import { expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { REPO } from "../support/proc.ts";

function listed(name: string): string[] {
  return fs
    .readFileSync(path.join(REPO, ".ci", name), "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

test("every file a lane lists exists", () => {
  for (const lane of ["agents-lane.txt", "compiled-lane.txt", "stress-lane.txt"]) {
    const files = listed(lane);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect({ lane, file, exists: fs.existsSync(path.join(REPO, file)) }).toEqual({ lane, file, exists: true });
  }
});

test("npm run test:agents runs the agents lane's files, and no plain bun test picks them up", () => {
  const scripts = (JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const named = scripts["test:agents"]!.split(/\s+/).filter((word) => word.startsWith("./")).map((word) => word.slice(2));
  expect(named.sort()).toEqual(listed("agents-lane.txt").sort());
  // Bun's default pattern is *.test.* / *_test.* / *.spec.* / *_spec.*: an agent suite named so
  // would run in npm test as well.
  for (const file of named) expect(/[._](test|spec)\.[jt]sx?$/.test(file)).toBe(false);
});
