// What the suite knows about one agent: where its pinned package lands, how its profile launches
// it, and the operator settings (provider env file lines, config files in its private HOME) that
// point it at a scripted model on 127.0.0.1. Everything an agent needs is expressed here as
// operator configuration, never as a branch in serverfs.
import type { ScriptedModel } from "../models/script.ts";
import type { Scenario } from "../scenarios.ts";

export interface AgentHome {
  /** The private HOME; XDG dirs live under it. */
  home: string;
  /** The per-run marker every process of the agent carries in its environment. */
  marker: string;
  /** The workdir the task runs in. */
  workdir: string;
}

export interface AgentSpec {
  /** The matrix row name and `npm run interop <name>` selector. */
  name: string;
  pkg: string;
  version: string;
  /** "cache": installed by the suite; "dev": the repository's own pinned dev dependency. */
  source: "cache" | "dev";
  /** The serverfs runtime: an ACP profile (its id, as docs/acp-profiles.md names it) or a native runtime. */
  runtime: { kind: "acp"; id: string; args: string[]; tmpdir_env?: string[]; probe_timeout_seconds?: number; shutdown_timeout_seconds?: number } | { kind: "codex" | "claude" };
  /** The executable, given the package's install dir. */
  command(dir: string): string;
  /**
   * The agent's own Windows x64 build, for `npm run interop:wine`: the npm package that carries the
   * native .exe (unpacked with `npm pack`, since npm refuses a win32 package on Linux), and the
   * exe inside the unpacked `package/` directory; `env`, provider env lines the Windows run adds
   * (operator settings Wine needs). Absent: the agent ships no Windows executable.
   */
  windows?: {
    pkg: string;
    version: string;
    exe: string;
    note?: string;
    env?: Record<string, string>;
    /**
     * What Wine cannot model for a scenario, as measured: when that cell fails, its detail leads
     * with this reason (the cell stays FAIL and the run exits 1). See docs/platform.md.
     */
    wineLimits?: Partial<Record<Scenario, string>>;
    /**
     * For an agent that is a Node script: `pkg`/`exe` name a Windows Node from npm, and this gives
     * the agent's entry script inside its own package (installed as on Linux) that Node runs.
     */
    script?: (agentDir: string) => string;
  };
  startModel(): ScriptedModel;
  /** Write config files under the HOME; return the provider env lines (KEY=VALUE). */
  configure(h: AgentHome, modelUrl: string): Record<string, string>;
  /**
   * The agent's own continuation bug: its session/load only works once the clock minute of the
   * session's creation has passed. The continuation scenario then waits for the next minute and
   * says so in its cell.
   */
  continuationNeedsNewMinute?: boolean;
}

export const baseEnv = (h: AgentHome): Record<string, string> => ({
  HOME: h.home,
  XDG_CONFIG_HOME: `${h.home}/.config`,
  XDG_DATA_HOME: `${h.home}/.local/share`,
  XDG_CACHE_HOME: `${h.home}/.cache`,
  XDG_STATE_HOME: `${h.home}/.local/state`,
  TERM: "dumb",
  NO_COLOR: "1",
  CI: "1",
  INTEROP_MARK: h.marker,
});
