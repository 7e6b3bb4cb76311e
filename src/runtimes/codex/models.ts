// Model discovery for Codex (docs/runtimes.md, Codex): a throwaway app-server in its own containment
// set and an empty temp cwd, `initialize` then `model/list` paged (limit 64, hidden included, stop
// on an empty or repeated cursor), at most 64 models. Never starts a turn, never writes config.
import * as fs from "node:fs";
import * as path from "node:path";
import { containment } from "../../../platform/index.ts";
import { ServerfsError } from "../../errors.ts";
import { CodexRpc } from "./rpc.ts";
import { CLIENT_INFO, appServerLaunch, type CodexTurnOptions } from "./turn.ts";
import { removeTree } from "../../../platform/fs/remove-tree.ts";

const MAX_MODELS = 64;
const MAX_PAGES = 8;
const DISCOVERY_TIMEOUT_MS = 20_000;

export function modelItem(raw: unknown): Record<string, unknown> | null {
  if (raw === null || typeof raw !== "object") return null;
  const m = raw as Record<string, unknown>;
  const id = typeof m.model === "string" && m.model.length > 0 ? m.model : typeof m.id === "string" ? m.id : null;
  if (id === null || id.length > 256) return null;
  const out: Record<string, unknown> = {
    id,
    display_name: typeof m.displayName === "string" ? m.displayName.slice(0, 256) : id,
    enabled: null,
    hidden: m.hidden === true,
    is_default: m.isDefault === true,
  };
  if (typeof m.description === "string") out.description = m.description.slice(0, 2048);
  if (Array.isArray(m.inputModalities)) out.input_modalities = m.inputModalities.filter((x) => typeof x === "string").slice(0, 16);
  if (Array.isArray(m.supportedReasoningEfforts)) {
    const supported = m.supportedReasoningEfforts
      .map((e) => (typeof e === "string" ? e : e && typeof e === "object" ? (e as { reasoningEffort?: unknown }).reasoningEffort : null))
      .filter((x): x is string => typeof x === "string")
      .slice(0, 16);
    out.reasoning = { supported, default: typeof m.defaultReasoningEffort === "string" ? m.defaultReasoningEffort : null };
  }
  if (Array.isArray(m.serviceTiers)) out.service_tiers = m.serviceTiers.slice(0, 16);
  return out;
}

export async function discoverModels(opts: Pick<CodexTurnOptions, "exe" | "config" | "agent" | "tmpRoot">, providerEnv: Record<string, string>): Promise<Record<string, unknown>[]> {
  fs.mkdirSync(opts.tmpRoot, { recursive: true, mode: 0o700 });
  const scratch = fs.mkdtempSync(path.join(opts.tmpRoot, "codex-models-"));
  const launch = appServerLaunch(opts, scratch);
  const runId = `models-${crypto.randomUUID()}`;
  const proc = await containment().spawn({ argv: launch.argv, cwd: scratch, env: { ...providerEnv, ...launch.env, SERVERFS_RUN_ID: runId }, runId, stderrLimitBytes: 16 * 1024 });
  const rpc = new CodexRpc(proc, {
    onNotification: () => {},
    onServerRequest: () => Promise.reject(new ServerfsError("PERMISSION_OUTSIDE_POLICY", "no requests during discovery")),
  });
  const deadline = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "codex model discovery timed out")), DISCOVERY_TIMEOUT_MS),
  );
  deadline.catch(() => {});
  try {
    const work = (async () => {
      await rpc.request("initialize", { clientInfo: CLIENT_INFO, capabilities: { experimentalApi: true } });
      rpc.notify("initialized");
      const models: Record<string, unknown>[] = [];
      const seen = new Set<string>();
      let cursor: string | null = null;
      for (let page = 0; page < MAX_PAGES && models.length < MAX_MODELS; page++) {
        const res = (await rpc.request("model/list", { limit: MAX_MODELS, includeHidden: true, ...(cursor ? { cursor } : {}) })) as {
          data?: unknown;
          nextCursor?: unknown;
        };
        const data = Array.isArray(res.data) ? res.data : [];
        for (const raw of data) {
          const item = modelItem(raw);
          if (item && !seen.has(item.id as string) && models.length < MAX_MODELS) {
            seen.add(item.id as string);
            models.push(item);
          }
        }
        const next = typeof res.nextCursor === "string" && res.nextCursor.length > 0 ? res.nextCursor : null;
        if (data.length === 0 || next === null || next === cursor) break;
        cursor = next;
      }
      return models;
    })();
    return await Promise.race([work, rpc.failure, deadline]);
  } finally {
    rpc.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "discovery finished"));
    try {
      const r = proc.stdin.end();
      if (r instanceof Promise) r.catch(() => {});
    } catch {
      // closed
    }
    await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 1000))]);
    await proc.stop(500);
    removeTree(scratch);
  }
}
