// A benchmark run as a child process, its output shown as it comes (each line under the child's
// name) and kept, so the caller can read the RESULT line after the child ends.
export interface ChildRun {
  exitCode: number;
  stdout: string;
  /** The last line of stderr that names an error, for a one-line reason when the child failed. */
  lastError: string | null;
}

async function pump(stream: ReadableStream<Uint8Array>, prefix: string, into: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  const emit = (line: string) => {
    into.push(line);
    console.log(`${prefix}${line}`);
  };
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) !== -1) {
      emit(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  }
  pending += decoder.decode();
  if (pending !== "") emit(pending);
}

export async function runChild(name: string, argv: string[], opts: { cwd: string; env: Record<string, string | undefined> }): Promise<ChildRun> {
  const proc = Bun.spawn(argv, { cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const out: string[] = [];
  const err: string[] = [];
  await Promise.all([pump(proc.stdout, `  ${name} | `, out), pump(proc.stderr, `  ${name} ! `, err)]);
  const exitCode = await proc.exited;
  const lastError = err.filter((l) => /error/i.test(l) && !/^Bun v/.test(l)).at(-1)?.trim() ?? null;
  return { exitCode, stdout: out.join("\n"), lastError };
}
