import { ServerfsError } from "../errors.ts";

export async function main(_argv: string[]): Promise<number> {
  throw new ServerfsError("USAGE_ERROR", "'init' is not built yet");
}
