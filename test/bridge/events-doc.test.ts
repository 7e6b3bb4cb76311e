// docs/design/events.md lists exactly the event vocabulary the code types: the Bridge's own
// events in one table, the adapters' in the other, nothing missing and nothing extra.
import { expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { BRIDGE_EVENT_TYPES, isEventName, TASK_EVENT_TYPES } from "../../src/bridge/service/events.ts";
import { PROVIDER_EVENT_TYPES } from "../../src/runtimes/types.ts";

const doc = fs.readFileSync(path.join(import.meta.dir, "../../docs/design/events.md"), "utf8");

/** The backticked names in the first column of the table under `heading`. */
function tableNames(heading: string): string[] {
  const start = doc.indexOf(`## ${heading}`);
  expect(start).toBeGreaterThanOrEqual(0);
  const next = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

test("the Bridge's events table is exactly BRIDGE_EVENT_TYPES", () => {
  expect(tableNames("Recorded by the Bridge").sort()).toEqual([...BRIDGE_EVENT_TYPES].sort());
});

test("the adapters' events table is exactly PROVIDER_EVENT_TYPES", () => {
  expect(tableNames("Emitted by adapters").sort()).toEqual([...PROVIDER_EVENT_TYPES].sort());
});

test("every typed event name is a valid stored name, and no name is in both tables", () => {
  for (const t of TASK_EVENT_TYPES) expect(isEventName(t)).toBe(true);
  expect(new Set(TASK_EVENT_TYPES).size).toBe(TASK_EVENT_TYPES.length);
  expect(isEventName("Bad Name")).toBe(false);
  expect(isEventName("a".repeat(65))).toBe(false);
});
