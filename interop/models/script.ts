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

export interface Dialect {
  write(file: string, content: string): ToolCall;
  shell(command: string): ToolCall;
  /** `ASK <question>`: the agent's own question tool, where it has one the tests use. */
  ask?(question: string): ToolCall;
}

/** Decide from the user's own prompts (oldest first), the newest being the instruction. */
export function decideFromPrompts(prompts: readonly string[], dialect: Dialect): Reply {
  const said = prompts[prompts.length - 1] ?? "";
  const [verb = "", ...rest] = said.split(/\s+/);
  if (verb === "WRITE") {
    const [file = "", ...content] = rest;
    return dialect.write(file, content.join(" "));
  }
  if (verb === "SHELL") return dialect.shell(said.slice("SHELL".length).trim());
  if (verb === "ASK" && dialect.ask) return dialect.ask(rest.join(" "));
  if (verb === "RECALL") return { text: `history: ${prompts.slice(0, -1).join(" | ")}` };
  return { text: `echo: ${said}` };
}

export const toolResultReply = (output: string): Reply => ({ text: `tool finished: ${output.slice(0, 200)}` });

/** Prompt texts an agent adds itself (environment context, reminders) start with a tag. */
export const isOwnPrompt = (t: string) => t.length > 0 && !t.startsWith("<");

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
