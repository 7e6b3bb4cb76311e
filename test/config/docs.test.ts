// docs/configuration.md must describe every key the loader accepts, in both formats.
import { afterAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { DEFAULT_LIMITS, DEFAULT_POLICY } from "../../src/config/defaults.ts";
import { ENV_GLOBALS, WORKDIR_FIELDS } from "../../src/config/env-source.ts";
import { cleanupTempDirs, REPO } from "./helpers.ts";

afterAll(cleanupTempDirs);

const doc = fs.readFileSync(path.join(REPO, "docs/configuration.md"), "utf8");

test("every .env key is documented", () => {
  const special = ["SERVERFS_AGENT_TASK_RETENTION_HOURS", "SERVERFS_PROXY_HOST", "SERVERFS_PROXY_PORT", "SERVERFS_PROXY_USERNAME", "SERVERFS_PROXY_PASSWORD", "SERVERFS_ACP_PROFILES_JSON"];
  const missing = [...Object.keys(ENV_GLOBALS), ...special]
    .filter((k) => !doc.includes(k))
    .filter((k) => {
      // `SERVERFS_CLAUDE_BIN` etc. are documented through the CODEX row "(and CLAUDE, QODER)".
      const m = /^SERVERFS_(CLAUDE|QODER)_(ENABLED|BIN|USE_PROXY)$/.exec(k);
      return !(m && doc.includes(`SERVERFS_CODEX_${m[2]}`));
    });
  expect(missing).toEqual([]);
  expect(Object.keys(WORKDIR_FIELDS).filter((f) => !doc.includes(`WORKDIR_NN_${f}`))).toEqual([]);
});

test("every TOML limit and policy key is documented with its default", () => {
  for (const [key, value] of Object.entries({ ...DEFAULT_LIMITS, ...DEFAULT_POLICY })) {
    if (Array.isArray(value)) continue;
    expect(doc).toMatch(new RegExp("\\| `" + key + "` \\|[^\\n]*\\b" + String(value) + "\\b"));
  }
});
