import { ServerfsError } from "../errors.ts";

export async function main(_argv: string[]): Promise<number> {
  throw new ServerfsError("USAGE_ERROR", "'bridge' is not built yet");
}
