// The real `qodercli` 1.1.52 (npm-installed), which cannot run a turn offline: it needs a Qoder
// login (docs/maintainers/testing.md), and without one it spends its time trying to reach Qoder's
// servers. So against the real CLI only the version probe and a task that fails with
// AGENT_AUTH_REQUIRED through the real Bridge, with nothing left running. It runs in .ci/run's
// agents lane (.ci/agents-lane.txt); the protocol itself is proven in qoder.test.ts against a
// recorded stand-in.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { qoderRuntimeFamily } from "../../../src/runtimes/qoder/index.ts";
import { processesWithHome } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";
import { startNativeRig, writeProviderEnv, type ServiceRig } from "../service-rig.ts";

const QODERCLI = path.resolve(import.meta.dir, "../../../node_modules/.bin/qodercli");
const installed = fs.existsSync(QODERCLI);
if (!installed) console.warn(`qoder live checks skipped: ${QODERCLI} is not installed (run npm install)`);
const hasNode = Bun.which("node") !== null;

describe.skipIf(!installed || !hasNode || process.platform === "win32")("the real qodercli 1.1.52", () => {
  let base: string;
  let home: string;
  let rig: ServiceRig;
  beforeAll(async () => {
    base = tempDir("serverfs-qoder-live-");
    home = path.join(base, "home");
    fs.mkdirSync(home);
    const envFile = path.join(base, "provider.env");
    writeProviderEnv(envFile, { HOME: home, NO_COLOR: "1" });
    rig = await startNativeRig((registry, services, options, diagnostics) => qoderRuntimeFamily(registry, services, options, diagnostics), ["qoder"], { provider_env_file: envFile, qoder: { enabled: true, bin: QODERCLI, use_proxy: false } });
  });
  afterAll(async () => {
    await rig?.stop();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test("runtime.list: the real version, and capabilities marked unmeasured (no live turn possible)", async () => {
    const runtimes = (await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
    expect(runtimes).toEqual([
      {
        name: "qoder",
        available: true,
        version: "1.1.52",
        persistent_session: true,
        live_steer: false,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "session-resume",
        model_override: true,
        model_discovery: "unsupported",
        capability_state: "unmeasured",
      },
    ]);
    expect(await rig.call("runtime.models", { runtime: "qoder" })).toMatchObject({ status: "unsupported", scope: "none", models: [] });
  }, 30_000);

  test("without a Qoder login a task fails AGENT_AUTH_REQUIRED, its session id kept, nothing left running", async () => {
    const id = await rig.submit("qoder", "hello");
    const done = await rig.waitTerminal(id, 60_000);
    expect({ status: done.status, error: done.error_code }).toEqual({ status: "failed", error: "AGENT_AUTH_REQUIRED" });
    expect(rig.store.get(id)!.native_session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(processesWithHome(home)).toEqual([]);
  }, 90_000);
});
