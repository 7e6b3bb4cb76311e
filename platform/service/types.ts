// What every OS's service integration needs: what to run, for whom, and a way to run the OS
// service manager's own command-line tools. Everything is passed in, so generating and installing
// service files is testable against a temporary home without touching the real one.

export interface ServiceDefinition {
  /** Absolute argv prefix that runs serverfs: [binary] when compiled, [bun, cli.ts] from source. */
  executable: string[];
  /** Absolute path of the deployment's config file. */
  configPath: string;
}

export interface ServiceHost {
  platform: NodeJS.Platform;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  /** -1 where uids do not exist (Windows). */
  uid: number;
}

export interface CommandResult {
  /** False when the tool does not exist on PATH. */
  found: boolean;
  code: number;
  stdout: string;
  stderr: string;
}

/** Lines for the operator (stdout), and the state the manager reports for `status`. */
export interface ServiceReport {
  lines: string[];
}

export interface ServiceManager {
  /** Human name: "systemd --user", "launchd", "Task Scheduler". */
  readonly name: string;
  /** Where the service definition file lives. */
  readonly definitionPath: string;
  /** The exact definition file content for `def`. */
  render(def: ServiceDefinition): string;
  install(def: ServiceDefinition): ServiceReport;
  uninstall(): ServiceReport;
  start(): ServiceReport;
  stop(): ServiceReport;
  /** The manager's own view ("active", "inactive", "running", ...), or null when unavailable. */
  managerState(): string | null;
  isInstalled(): boolean;
}
