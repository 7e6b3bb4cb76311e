// The environment a provider child starts with: Bun control variables and serverfs internals are
// gone, the per-task run marker is there, the operator's private env file is applied, and its
// values never come back to a caller.
import { expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "../support/temp.ts";
import { cleanup, startHarness } from "./helpers.ts";

test("scrubbed env + run marker + provider env file; file values are redacted from results", async () => {
  const dir = tempDir();
  const envFile = path.join(dir, "provider.env");
  fs.writeFileSync(envFile, "# provider credentials\nPROVIDER_TOKEN=tok-abcdef123456789\nEMPTY=\n", { mode: 0o600 });
  process.env.BUN_OPTIONS = "--preload /nonexistent.js";
  process.env.SERVERFS_INTERNAL_X = "leak";
  const h = await startHarness({ agent: { provider_env_file: envFile } });
  try {
    const id = await h.submit("env:BUN_OPTIONS,SERVERFS_INTERNAL_X,SERVERFS_RUN_ID,PROVIDER_TOKEN,EMPTY");
    const t = await h.waitTerminal(id);
    expect(t.status).toBe("succeeded");
    expect(t.final_response).toBe(`BUN_OPTIONS=<unset> SERVERFS_INTERNAL_X=<unset> SERVERFS_RUN_ID=run_${id.slice(4)} PROVIDER_TOKEN=<redacted> EMPTY=`);
  } finally {
    delete process.env.BUN_OPTIONS;
    delete process.env.SERVERFS_INTERNAL_X;
    await h.stop();
    cleanup(h.root);
  }
  // A provider env file others can read is refused at start, and nothing is left listening.
  fs.chmodSync(envFile, 0o644);
  await expect(startHarness({ agent: { provider_env_file: envFile } })).rejects.toMatchObject({ code: "CONFIGURATION_ERROR" });
  cleanup(dir);
});
