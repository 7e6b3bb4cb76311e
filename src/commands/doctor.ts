// `serverfs doctor --config FILE | --env-file FILE [--json] [--probe-acp]`: a read-only
// diagnosis. The report goes to stdout (people pipe it to grep and scripts parse --json);
// usage errors still go to stderr through the CLI. Exit 0 clean (WARN allowed), 1 on any FAIL,
// 2 when the configuration is unreadable or invalid.
import { formatJson, formatText } from "../doctor/format.ts";
import { runDoctor } from "../doctor/runner.ts";
import { flag, parseArgs } from "./args.ts";
import { DOCTOR } from "./specs.ts";

function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}

export async function main(argv: string[]): Promise<number> {
  // Exactly one of --config FILE or --env-file FILE (the table checks it).
  const args = parseArgs(argv, DOCTOR);
  const configFile = flag(args, "config");
  const envFile = flag(args, "env-file");
  const outcome = await runDoctor(configFile !== undefined ? { configFile } : { envFile: envFile! }, {
    probeAcp: args.switches.has("probe-acp"),
  });
  await writeStdout(args.switches.has("json") ? formatJson(outcome.report) : formatText(outcome.report));
  return outcome.exitCode;
}
