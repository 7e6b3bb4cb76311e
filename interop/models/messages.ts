// A scripted Anthropic Messages API endpoint (SSE streaming or plain JSON) on 127.0.0.1, for
// Claude Code (natively through the Agent SDK, or behind the Zed ACP adapters) via
// ANTHROPIC_BASE_URL. Claude Code appends its environment context as a trailing role:"system"
// entry and <system-reminder> text blocks; both are skipped when looking for the user's own
// prompts. A request without tools (title, summaries, quota checks) gets "Fixture"; otherwise the
// script language (script.ts) decides, with tool calls in Claude Code's dialect.
import { decideFromPrompts, ownText, serveOnLoopback, sseStream, textOf, toolResultReply, type Dialect, type Reply, type ScriptedModel } from "./script.ts";

interface Message {
  role: string;
  content?: unknown;
}

type Block = { type?: string; text?: unknown; content?: unknown };

/** Claude Code's built-in tools (the same names with and without an ACP adapter in front). */
export const CLAUDE_DIALECT: Dialect = {
  write: (file_path, content) => ({ tool: "Write", args: { file_path, content } }),
  shell: (command) => ({ tool: "Bash", args: { command, description: "run a command" } }),
  ask: (question) => ({
    tool: "AskUserQuestion",
    args: {
      questions: [
        {
          question,
          header: "Colour",
          multiSelect: false,
          options: [
            { label: "Red", description: "the warm one" },
            { label: "Blue", description: "the cool one" },
          ],
        },
      ],
    },
  }),
};

function blocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

export function userPrompts(messages: Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== "user") continue;
    for (const b of blocks(m.content)) {
      const t = b.type === "text" && typeof b.text === "string" ? ownText(b.text) : "";
      if (t.length > 0) out.push(t);
    }
  }
  return out;
}

function decide(messages: Message[], tools: string[], dialect: Dialect): Reply {
  if (tools.length === 0) return { text: "Fixture" };
  const users = messages.filter((m) => m.role === "user");
  const result = blocks(users[users.length - 1]?.content).find((b) => b.type === "tool_result");
  if (result) return toolResultReply(typeof result.content === "string" ? result.content : textOf(result.content));
  return decideFromPrompts(userPrompts(messages), dialect, tools);
}

function contentFor(reply: Reply): Record<string, unknown> {
  return "text" in reply
    ? { type: "text", text: reply.text }
    : { type: "tool_use", id: `toolu_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`, name: reply.tool, input: reply.args };
}

function frames(block: Record<string, unknown>, model: string): string[] {
  const id = `msg_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;
  const text = block.type === "text";
  const events: Array<[string, Record<string, unknown>]> = [
    ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: text ? { type: "text", text: "" } : { ...block, input: {} } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: text ? { type: "text_delta", text: block.text } : { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: text ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function startMessagesModel(dialect: Dialect = CLAUDE_DIALECT): ScriptedModel {
  const requests: ScriptedModel["requests"] = [];
  const server = serveOnLoopback(async (req, url) => {
    if (req.method === "POST" && url.pathname.endsWith("/messages/count_tokens")) return Response.json({ input_tokens: 10 });
    if (req.method !== "POST" || !url.pathname.endsWith("/messages")) return new Response("not found", { status: 404 });
    const raw = await req.text();
    const body = JSON.parse(raw) as { messages?: Message[]; tools?: Array<{ name?: string }>; model?: string; stream?: boolean };
    const messages = (Array.isArray(body.messages) ? body.messages : []).filter((m) => m.role !== "system");
    const tools = (body.tools ?? []).map((t) => t.name ?? "").filter((n) => n.length > 0);
    const model = typeof body.model === "string" ? body.model : "";
    requests.push({ prompts: userPrompts(messages), tools, model, raw });
    const block = contentFor(decide(messages, tools, dialect));
    if (body.stream === true) return new Response(sseStream(frames(block, model)), { headers: { "content-type": "text/event-stream" } });
    return Response.json({
      id: `msg_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`,
      type: "message",
      role: "assistant",
      model,
      content: [block],
      stop_reason: block.type === "text" ? "end_turn" : "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    });
  });
  return { ...server, requests };
}
