// Which runtime adapters a Bridge runs. Each runtime family contributes adapters for the runtimes
// the registry enables; the service never branches on a runtime's name. New families (the
// generic ACP adapter, native Codex/Claude/Qoder) add one entry to RUNTIME_FAMILIES.
import type { Registry } from "../config/types.ts";
import type { RuntimeAdapter, RuntimeServices } from "../runtimes/types.ts";
import { FakeAdapter } from "../runtimes/fake/adapter.ts";
import { acpRuntimeFamily } from "../runtimes/acp/index.ts";
import { codexRuntimeFamily } from "../runtimes/codex/index.ts";
import { claudeRuntimeFamily } from "../runtimes/claude/index.ts";
import { qoderRuntimeFamily } from "../runtimes/qoder/index.ts";

export interface FamilyOptions {
  /** Test hook for the fake runtime: a file each fake turn appends to. */
  fakeTurnLog?: string | null;
}

export type RuntimeFamily = (
  registry: Registry,
  services: (runtime: string) => RuntimeServices,
  options: FamilyOptions,
) => RuntimeAdapter[];

const fakeFamily: RuntimeFamily = (registry, _services, options) =>
  registry.agent.enable_fake_runtime ? [new FakeAdapter({ turnLog: options.fakeTurnLog ?? null })] : [];

export const RUNTIME_FAMILIES: RuntimeFamily[] = [fakeFamily, acpRuntimeFamily, codexRuntimeFamily, claudeRuntimeFamily, qoderRuntimeFamily];

export function buildAdapters(
  registry: Registry,
  services: (runtime: string) => RuntimeServices,
  options: FamilyOptions = {},
): Map<string, RuntimeAdapter> {
  const out = new Map<string, RuntimeAdapter>();
  for (const family of RUNTIME_FAMILIES) {
    for (const adapter of family(registry, services, options)) out.set(adapter.name, adapter);
  }
  return out;
}
