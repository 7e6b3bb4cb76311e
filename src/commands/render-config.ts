// serverfs render-config (--config FILE | --env-file FILE) [--out FILE]
// Validate the deployment and emit the normalized private Bridge document. Exit 0 when valid,
// 2 when invalid (every problem on its own stderr line). An invalid config never touches --out.
// Workdirs that overlap are a WARN line each on stderr; the exit status stays 0.
import { loadRegistry, type LoadInput } from "../config/load.ts";
import { findWorkdirOverlaps, overlapWarning } from "../config/overlap.ts";
import { writePrivateFileAtomic } from "../../platform/fs/private-file.ts";
import { renderDocument } from "../config/render.ts";
import { ServerfsError } from "../errors.ts";
import { flag, parseArgs, usage } from "./args.ts";
import { RENDER_CONFIG } from "./specs.ts";

const EXIT_INVALID = 2;

export async function main(argv: string[]): Promise<number> {
  // Exactly one of --config FILE or --env-file FILE (the table checks it).
  const args = parseArgs(argv, RENDER_CONFIG);
  const configFile = flag(args, "config");
  const envFile = flag(args, "env-file");
  const input: LoadInput = configFile !== undefined ? { configFile } : { envFile: envFile! };
  const out = flag(args, "out");
  if (out === "") throw usage("--out needs a file name");

  let document: string;
  let warnings: string[];
  try {
    const loaded = await loadRegistry(input);
    document = renderDocument(loaded.registry);
    warnings = findWorkdirOverlaps(loaded.registry, loaded.keyName).map(overlapWarning);
  } catch (err) {
    if (err instanceof ServerfsError && err.code === "CONFIGURATION_ERROR") {
      const problems = Array.isArray(err.details?.problems) ? (err.details.problems as string[]) : [err.message];
      process.stderr.write(problems.map((p) => `serverfs: render-config: CONFIGURATION_ERROR: ${p}\n`).join(""));
      return EXIT_INVALID;
    }
    throw err;
  }
  // Warnings do not change the verdict (the document is valid); they go where errors go.
  const file = configFile ?? envFile!;
  process.stderr.write(warnings.map((w) => `serverfs: render-config: WARN: ${file}: ${w}\n`).join(""));
  if (out !== undefined) writePrivateFileAtomic(out, document);
  else await writeStdout(document);
  return 0;
}

function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}
