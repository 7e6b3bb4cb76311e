// Which runtime adapters a Bridge runs. Every family of the runtime catalog
// (src/config/runtime-catalog.ts) contributes adapters for the runtimes the registry enables; the table
// below is typed by the catalog's family names, so a family cannot be listed in the catalog and
// missing here. The service never branches on a runtime's name.
import type { Registry } from "../config/types.ts";
import { RUNTIME_CATALOG, type RuntimeFamilyName } from "../config/runtime-catalog.ts";
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

/** Each catalog family's adapter factory. */
export const ADAPTER_FACTORIES: { readonly [F in RuntimeFamilyName]: RuntimeFamily } = {
  fake: fakeFamily,
  acp: acpRuntimeFamily,
  codex: codexRuntimeFamily,
  claude: claudeRuntimeFamily,
  qoder: qoderRuntimeFamily,
};

export const RUNTIME_FAMILIES: RuntimeFamily[] = RUNTIME_CATALOG.map((d) => ADAPTER_FACTORIES[d.family]);

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
