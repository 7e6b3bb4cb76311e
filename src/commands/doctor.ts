// `serverfs doctor --config FILE | --env-file FILE [--json] [--probe-acp]`: a read-only
// diagnosis. The report goes to stdout (people pipe it to grep and scripts parse --json);
// usage errors still go to stderr through the CLI. Exit 0 clean (WARN allowed), 1 on any FAIL,
// 2 when the configuration is unreadable or invalid.
import { formatJson, formatText } from "../doctor/format.ts";
import { runDoctor } from "../doctor/runner.ts";
import { flag, parseArgs, usage } from "./args.ts";

function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { config: { value: true, path: true }, "env-file": { value: true, path: true }, json: {}, "probe-acp": {} });
  if (args.positionals.length > 0) throw usage(`unexpected argument '${args.positionals[0]}'`);
  const configFile = flag(args, "config");
  const envFile = flag(args, "env-file");
  if ((configFile === undefined) === (envFile === undefined)) throw usage("give exactly one of --config FILE or --env-file FILE");
  const outcome = await runDoctor(configFile !== undefined ? { configFile } : { envFile: envFile! }, {
    probeAcp: args.switches.has("probe-acp"),
  });
  await writeStdout(args.switches.has("json") ? formatJson(outcome.report) : formatText(outcome.report));
  return outcome.exitCode;
}
