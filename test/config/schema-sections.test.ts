// The shape check builds a section's schema only when a document has that section. Verdicts and
// the order of problems must not depend on which sections are present, which were built before,
// or the order of the document's keys.
import { describe, expect, test } from "bun:test";
import { checkRawDocument } from "../../src/config/schema.ts";

const w = [{ alias: "a", path: "/a" }];
const paths = (raw: unknown) => {
  const r = checkRawDocument(raw);
  return r.ok ? "ok" : r.problems.map((p) => `${p.path.join(".")}: ${p.reason}`);
};

describe("per-section schemas", () => {
  test("a document with a problem in every section reports each, in the schema's order, whatever the key order", () => {
    const sections = {
      server: { log_level: 1 },
      limits: { max_list_entries: 0 },
      defaults: { allow_hidden: "no" },
      agent: { enabled: "x", codex: { enabled: 1 }, acp_profiles: [{ id: "Bad", command: 1 }] },
    };
    const expected = [
      "agent.acp_profiles.0.command: expected a string, got 1",
      "agent.acp_profiles.0.id: expected a profile id: a lowercase letter, then up to 27 lowercase letters, digits, '_' or '-', got a string",
      "agent.codex.enabled: expected a boolean (true or false), got 1",
      "agent.enabled: expected a boolean (true or false), got a string",
      "defaults.allow_hidden: expected a boolean (true or false), got a string",
      "limits.max_list_entries: expected a positive integer, got 0",
      "server.log_level: expected a string, got 1",
      "bogus: unknown key",
    ];
    expect(paths({ workdirs: w, ...sections, bogus: 1 })).toEqual(expected);
    const reversed = Object.fromEntries(Object.entries({ workdirs: w, ...sections, bogus: 1 }).reverse());
    expect(paths(reversed)).toEqual(expected);
    // Each section alone reports exactly its own lines.
    for (const [name, value] of Object.entries(sections)) {
      expect(paths({ [name]: value, workdirs: w })).toEqual(expected.filter((l) => l.startsWith(`${name}.`)));
    }
  });

  test("absent, empty and unknown sections", () => {
    expect(paths({ workdirs: w })).toBe("ok");
    expect(paths({ workdirs: w, server: {}, limits: {}, defaults: {}, agent: {} })).toBe("ok");
    expect(paths({ workdirs: w, Agent: {} })).toEqual(["Agent: unknown key"]);
    expect(paths({ workdirs: w, toString: {} })).toEqual(["toString: unknown key"]);
    expect(paths({ server: 1 })).toEqual(["workdirs: missing (expected a list of 1 to 64 workdirs)", "server: expected a table, got 1"]);
    expect(paths({ workdirs: [] })).toEqual(["workdirs: expected a list of 1 to 64 workdirs, got a list of 0"]);
    expect(paths([])).toEqual(["workdirs: missing (expected a list of 1 to 64 workdirs)"]);
    expect(paths(null)).not.toBe("ok");
    expect(paths(5)).not.toBe("ok");
  });
});
