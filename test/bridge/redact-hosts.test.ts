// Host paths through the real Bridge: the fake provider prints the directories of its environment
// (a home reached through a symlink, the Bridge's state dir, temp dirs, provider config dirs) in
// prose, tool-call locations, an approval, a spooled result and an error message. Everything a
// caller can read back holds placeholders only, never the paths nor the home's user name.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { FakeAdapter } from "../../src/runtimes/fake/adapter.ts";
import { startNativeRig } from "../runtimes/service-rig.ts";
import { cleanup, startHarness, tempDir, type Harness } from "./helpers.ts";

const USER = "zqalice";
let h: Harness;
let dirs: Record<string, string>;

beforeAll(async () => {
  const root = fs.realpathSync(tempDir("sfs-redact-hosts-"));
  const stateDir = path.join(root, "state");
  const realHome = path.join(root, "users", USER);
  dirs = {
    HOME: path.join(root, "home-link"),
    CODEX_HOME: path.join(root, "codex-home"),
    CLAUDE_CONFIG_DIR: path.join(realHome, ".claude-alt"),
    TMPDIR: path.join(root, "provider-tmp"),
    SFS_STATE: stateDir,
    // Not under the test root: the Bridge's own temp dir, and its own home when it is a real one.
    SFS_BRIDGE_TMP: path.join(os.tmpdir(), `sfs-bridge-tmp-${process.pid}`),
    ...(os.homedir().length > 1 ? { SFS_BRIDGE_HOME: path.join(os.homedir(), ".cache", "x") } : {}),
  };
  fs.mkdirSync(path.join(realHome, ".claude-alt"), { recursive: true });
  fs.symlinkSync(realHome, dirs.HOME!);
  for (const d of [dirs.CODEX_HOME!, dirs.TMPDIR!]) fs.mkdirSync(d, { recursive: true });
  const envFile = path.join(root, "provider.env");
  fs.writeFileSync(envFile, Object.entries(dirs).map(([k, v]) => `${k}=${v}`).join("\n"), { mode: 0o600 });
  h = await startHarness({ reuse: { root, stateDir }, agent: { provider_env_file: envFile, result_spool_threshold_bytes: 256 } });
});
afterAll(async () => {
  await h.stop();
  cleanup(h.root);
});

const NAMES = "HOME,CODEX_HOME,CLAUDE_CONFIG_DIR,TMPDIR,SFS_STATE,SFS_BRIDGE_TMP,SFS_BRIDGE_HOME";

function leaks(everything: string): string[] {
  const secrets = [...Object.values(dirs), fs.realpathSync(dirs.HOME!), h.root, USER];
  if (os.homedir().length > 1) secrets.push(os.homedir());
  return secrets.filter((s) => everything.includes(s));
}

async function readSpool(id: string): Promise<string> {
  let text = "";
  for (let offset = 0; ; ) {
    const c = await h.call("task.result.read", { task_id: id, offset_bytes: offset, max_bytes: 65_536 });
    text += c.text as string;
    offset = c.next_offset_bytes as number;
    if (c.eof) return text;
  }
}

describe("host paths in caller-visible output", () => {
  test("events, tool locations, approval, spooled result and task view carry placeholders only", async () => {
    const id = await h.submit(`host-paths:${NAMES}`);
    const pendingView = await h.waitFor(id, (t) => t.pending_request_id !== null);
    const req = pendingView.pending_request as { request_id: string; payload: Record<string, unknown> };
    expect(req.payload.title).toBe(
      "List <home> <home> <provider-config> <provider-config> <tmp> <state> <tmp>/sfs-bridge-tmp-" +
        `${process.pid}${dirs.SFS_BRIDGE_HOME ? " <home>/.cache/x" : ""}`,
    );
    expect(new Set((req.payload.file_changes as Array<{ path: string }>).map((c) => c.path))).toEqual(new Set(["<outside-workdir>"]));
    await h.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "deny" });
    const t = await h.waitTerminal(id);
    expect(t.status).toBe("succeeded");
    expect((t.result as { storage: string }).storage).toBe("spool");
    const spooled = await readSpool(id);
    expect(spooled.startsWith("decision=deny (<home>/config.toml) (<home>/config.toml) (<provider-config>/config.toml)")).toBe(true);
    expect(spooled).toContain("(<state>/config.toml) (<tmp>/sfs-bridge-tmp-");
    const events = (await h.call("task.events", { task_id: id, limit: 500 })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    const message = events.find((e) => e.event_type === "agent.message")!;
    expect(message.payload.text).toStartWith("extensions in <home>/extensions. extensions in <home>/extensions. extensions in <provider-config>/extensions.");
    const tool = events.find((e) => e.event_type === "tool.call")!;
    expect(tool.payload.title).toBe("Read <home>/a");
    expect(new Set((tool.payload.locations as Array<{ path: string }>).map((l) => l.path))).toEqual(new Set(["<outside-workdir>"]));
    expect((tool.payload.raw as { argv: string[] }).argv.slice(0, 3)).toEqual(["ls", "<outside-workdir>", "<outside-workdir>"]);
    const everything = [
      JSON.stringify(pendingView),
      JSON.stringify(t),
      JSON.stringify(await h.call("task.get", { task_id: id })),
      JSON.stringify(events),
      JSON.stringify(await h.call("task.list", {})),
      spooled,
    ].join("\n");
    expect(leaks(everything)).toEqual([]);
  });

  test("an error message names no host path", async () => {
    const id = await h.submit(`host-fail:${NAMES}`);
    const t = await h.waitTerminal(id);
    expect([t.status, t.error_code]).toEqual(["failed", "AGENT_PROVIDER_ERROR"]);
    expect(t.error_message as string).toStartWith("could not read <home>/settings.json, <home>/settings.json, <provider-config>/settings.json,");
    expect((t.error_message as string).endsWith(".")).toBe(true);
    const events = await h.call("task.events", { task_id: id, limit: 500 });
    expect(leaks(JSON.stringify(t) + JSON.stringify(events))).toEqual([]);
  });
});

// Outside any task: what an adapter reports about itself (a version line, a model catalog) reaches
// list_agent_runtimes, list_agent_models and the task manifest through the same host redaction.
describe("runtime listings and manifests", () => {
  test("probe versions and model catalogs naming host directories are redacted", async () => {
    let stateDir = "";
    const rig = await startNativeRig(
      (registry) => {
        stateDir = registry.server.state_dir!;
        const inner = new FakeAdapter();
        const version = `hosty 1.0 (${stateDir}/bin/hosty, ${os.tmpdir()}/hosty-cache)`;
        return [
          {
            name: "hosty",
            probe: async () => ({ ...(await inner.probe()), name: "hosty", version }),
            listModels: async () => ({ runtime: "hosty", status: "ok", models: [{ id: "m1", description: `weights in ${stateDir}/models/m1` }] }),
            run: (ctx) => inner.run(ctx),
            cancel: (id) => inner.cancel(id),
          },
        ];
      },
      ["hosty"],
      {},
    );
    try {
      const expected = `hosty 1.0 (<state>/bin/hosty, <tmp>/hosty-cache)`;
      const listed = (await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
      expect(listed.map((r) => r.version)).toEqual([expected]);
      const models = await rig.call("runtime.models", { runtime: "hosty" });
      expect(models.models).toEqual([{ id: "m1", description: "weights in <state>/models/m1" }]);
      const id = await rig.submit("hosty", "complete:ok");
      const t = await rig.waitTerminal(id);
      expect((t.manifest as { runtime: { version: string } }).runtime.version).toBe(expected);
      expect(JSON.stringify([listed, models, t])).not.toContain(stateDir);
    } finally {
      await rig.stop();
    }
  }, 30_000);
});
