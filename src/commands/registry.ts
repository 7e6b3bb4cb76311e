// The command table: each command's command-line spec (src/commands/specs.ts, which the parser
// and help both read) and its module. Modules are imported lazily so `serverfs --version` and
// `help` load nothing else, and `serve` never pays for what `doctor` or `bridge` import.
import type { CommandSpec } from "./args.ts";
import { BRIDGE, CONNECT, DOCTOR, INIT, RENDER_CONFIG, SERVE, SERVICE, TASKS } from "./specs.ts";

export type CommandMain = (argv: string[]) => Promise<number>;

export interface CommandEntry {
  spec: CommandSpec;
  load: () => Promise<{ main: CommandMain }>;
}

export const COMMANDS: Record<string, CommandEntry> = {
  serve: { spec: SERVE, load: () => import("./serve.ts") },
  bridge: { spec: BRIDGE, load: () => import("./bridge.ts") },
  "render-config": { spec: RENDER_CONFIG, load: () => import("./render-config.ts") },
  doctor: { spec: DOCTOR, load: () => import("./doctor.ts") },
  tasks: { spec: TASKS, load: () => import("./tasks.ts") },
  service: { spec: SERVICE, load: () => import("./service.ts") },
  connect: { spec: CONNECT, load: () => import("./connect.ts") },
  init: { spec: INIT, load: () => import("./init.ts") },
};
