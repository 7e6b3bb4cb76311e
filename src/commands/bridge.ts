// `serverfs bridge (--config FILE | --env-file FILE)`: the Agent Bridge in the foreground. A service manager runs it;
// SIGTERM/SIGINT stop it cleanly (running tasks become interrupted/BRIDGE_SHUTDOWN and their
// provider trees are stopped). Logs are JSON lines on stderr.
import { loadRegistry } from "../config/load.ts";
import { refuseAgentOverlaps } from "../config/overlap.ts";
import { becomeSubreaper } from "../../platform/index.ts";
import { startBridge } from "../bridge/daemon.ts";
import { checkProviderEnvFileAtStart } from "../runtimes/kernel/provider-env.ts";
import { flag, parseArgs } from "./args.ts";
import { BRIDGE } from "./specs.ts";

function log(event: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level: "INFO", component: "bridge", event, ...fields })}\n`);
}

export async function main(argv: string[]): Promise<number> {
  // Exactly one of --config FILE or --env-file FILE (the table checks it).
  const args = parseArgs(argv, BRIDGE);
  const configFile = flag(args, "config");
  const envFile = flag(args, "env-file");
  const source = configFile ?? envFile!;
  const { registry, keyName } = await loadRegistry(configFile !== undefined ? { configFile } : { envFile: envFile! });
  // Before anything is created: two agent workdirs over the same files would each get a lease.
  if (registry.agent.enabled) refuseAgentOverlaps(registry, keyName, source);
  checkProviderEnvFileAtStart(registry.agent.provider_env_file, keyName(["agent", "provider_env_file"]), source);
  process.umask(0o077);
  process.on("unhandledRejection", (reason) => {
    log("bridge.unhandled_rejection", { level: "ERROR", error: reason instanceof Error ? reason.name : typeof reason });
  });
  process.on("uncaughtException", (err) => {
    log("bridge.uncaught_exception", { level: "ERROR", error: err instanceof Error ? err.name : typeof err });
  });
  // Listen for stop signals before the socket exists, so a stop right after start is never lost.
  const stopSignal = new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  const subreaper = becomeSubreaper();
  const bridge = await startBridge({
    registry,
    log,
    // Test aid, effective only when the fake runtime is enabled: a file each fake turn appends to.
    fakeTurnLog: registry.agent.enable_fake_runtime ? (process.env.SERVERFS_FAKE_TURN_LOG ?? null) : null,
  });
  log("bridge.started", { pid: process.pid, subreaper, reconciled: bridge.reconciled });
  // The Bridge stays at the executable's start-up JIT policy (platform/jit-policy.ts): a task runs
  // each step of its path once, so optimizing that code costs more than it gives back.
  const signal = await stopSignal;
  log("bridge.stopping", { signal });
  await bridge.close();
  log("bridge.stopped", {});
  return 0;
}
