// The script language every scripted model speaks, whatever its wire: the newest user instruction
// decides the reply. Agents name their tools differently, so a wire is given a dialect that turns
// "write this file" / "run this command" into the agent's own tool name and argument shape.
//   WRITE <abs-path> <content...>  → the dialect's write tool
//   SHELL <command...>             → the dialect's shell tool
//   RECALL                         → "history: <every earlier user prompt, joined by ' | '>"
//   anything else                  → "echo: <text>"
// A tool result always gets "tool finished: <first 200 chars>".

export type ToolCall = { tool: string; args: Record<string, unknown> };
export type Reply = { text: string } | ToolCall;

/** Each method also gets the tool names the request offered (some agents' tool sets vary by version). */
export interface Dialect {
  write(file: string, content: string, tools: readonly string[]): ToolCall;
  shell(command: string, tools: readonly string[]): ToolCall;
  /** `ASK <question>`: the agent's own question tool; null when it is not offered (then: echo). */
  ask?(question: string, tools: readonly string[]): ToolCall | null;
}

/** Decide from the user's own prompts (oldest first), the newest being the instruction. */
export function decideFromPrompts(prompts: readonly string[], dialect: Dialect, tools: readonly string[] = []): Reply {
  const said = prompts[prompts.length - 1] ?? "";
  const [verb = "", ...rest] = said.split(/\s+/);
  if (verb === "WRITE") {
    const [file = "", ...content] = rest;
    return dialect.write(file, content.join(" "), tools);
  }
  if (verb === "SHELL") return dialect.shell(said.slice("SHELL".length).trim(), tools);
  const asked = verb === "ASK" && dialect.ask ? dialect.ask(rest.join(" "), tools) : null;
  if (asked) return asked;
  if (verb === "RECALL") return { text: `history: ${prompts.slice(0, -1).join(" | ")}` };
  return { text: `echo: ${said}` };
}

export const toolResultReply = (output: string): Reply => ({ text: `tool finished: ${output.slice(0, 200)}` });

/**
 * The user's own text of a prompt part, or "" when the part is only context the agent added itself
 * (environment, reminders, dates): those come as <tag>...</tag> blocks, alone or before the text.
 */
export function ownText(t: string): string {
  let rest = t.trim();
  for (let m = /^<([A-Za-z_-]+)>[\s\S]*?<\/\1>\s*/.exec(rest); m; m = /^<([A-Za-z_-]+)>[\s\S]*?<\/\1>\s*/.exec(rest)) rest = rest.slice(m[0].length);
  return rest.startsWith("<") ? "" : rest;
}

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : "")).join("");
  }
  return "";
}

/** A model wire on 127.0.0.1 that keeps what it was asked. */
export interface ScriptedModel {
  baseUrl: string;
  requests: Array<{ prompts: string[]; tools: string[]; model: string; raw: string }>;
  stop(): void;
}

export function sseStream(frames: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const f of frames) controller.enqueue(enc.encode(f));
      controller.close();
    },
  });
}

/** A model wire's HTTP server on 127.0.0.1 (an ephemeral port), and how to reach and stop it. */
export function serveOnLoopback(handle: (req: Request, url: URL) => Response | Promise<Response>): { baseUrl: string; stop(): void } {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => handle(req, new URL(req.url)) });
  return { baseUrl: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
