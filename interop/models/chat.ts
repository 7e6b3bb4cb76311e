// A scripted OpenAI-compatible Chat Completions endpoint (SSE streaming) on 127.0.0.1. A request
// without tools (a title or suggestion call) gets "Fixture session"; otherwise the script language
// (script.ts) decides, with tool calls in the given dialect. Every request body is kept so a run can
// prove what the model was shown.
import { decideFromPrompts, ownText, serveOnLoopback, sseStream, textOf, toolResultReply, type Dialect, type Reply, type ScriptedModel } from "./script.ts";

export interface ChatMessage {
  role: string;
  content?: unknown;
}

export interface ChatModel extends ScriptedModel {
  chatRequests: Array<{ messages: ChatMessage[]; tools: string[] }>;
}

/** OpenCode's built-in tools. */
export const OPENCODE_DIALECT: Dialect = {
  write: (filePath, content) => ({ tool: "write", args: { filePath, content } }),
  shell: (command) => ({ tool: "bash", args: { command, description: "run a command" } }),
};

export function decideChat(messages: ChatMessage[], tools: string[], dialect: Dialect): Reply {
  if (tools.length === 0) return { text: "Fixture session" };
  const last = messages[messages.length - 1];
  if (!last) return { text: "empty" };
  if (last.role === "tool") return toolResultReply(textOf(last.content));
  return decideFromPrompts(userPrompts(messages), dialect, tools);
}

/** The user's own prompts: each text part of a user message on its own, without the agent's <tagged> context parts. */
export function userPrompts(messages: ChatMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== "user") continue;
    const parts = Array.isArray(m.content) ? (m.content as unknown[]) : [m.content];
    for (const p of parts) {
      const t = ownText(textOf(typeof p === "string" ? p : [p]));
      if (t.length > 0) out.push(t);
    }
  }
  return out;
}

function frames(reply: Reply): string[] {
  const base = { id: `chatcmpl-${crypto.randomUUID()}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model" };
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const chunks: unknown[] =
    "text" in reply
      ? [
          { ...base, choices: [{ index: 0, delta: { role: "assistant", content: reply.text }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage },
        ]
      : [
          {
            ...base,
            choices: [
              {
                index: 0,
                delta: { role: "assistant", tool_calls: [{ index: 0, id: `call_${crypto.randomUUID().slice(0, 8)}`, type: "function", function: { name: reply.tool, arguments: JSON.stringify(reply.args) } }] },
                finish_reason: null,
              },
            ],
          },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage },
        ];
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"];
}

export function startChatModel(dialect: Dialect = OPENCODE_DIALECT): ChatModel {
  const requests: ChatModel["requests"] = [];
  const chatRequests: ChatModel["chatRequests"] = [];
  const server = serveOnLoopback(async (req, url) => {
    if (req.method === "GET" && url.pathname.endsWith("/models")) return Response.json({ object: "list", data: [{ id: "fake-model", object: "model", owned_by: "fake" }] });
    if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) return new Response("not found", { status: 404 });
    const raw = await req.text();
    const body = JSON.parse(raw) as { messages?: ChatMessage[]; tools?: Array<{ function?: { name?: string } }>; stream?: boolean };
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const tools = (body.tools ?? []).map((t) => t.function?.name ?? "").filter((n) => n.length > 0);
    chatRequests.push({ messages, tools });
    requests.push({ prompts: userPrompts(messages), tools, model: typeof (body as { model?: unknown }).model === "string" ? (body as { model: string }).model : "", raw });
    const reply = decideChat(messages, tools, dialect);
    if (body.stream === false) {
      const message = "text" in reply ? { role: "assistant", content: reply.text } : { role: "assistant", content: null, tool_calls: [{ id: `call_${crypto.randomUUID().slice(0, 8)}`, type: "function", function: { name: reply.tool, arguments: JSON.stringify(reply.args) } }] };
      return Response.json({ id: `chatcmpl-${crypto.randomUUID()}`, object: "chat.completion", created: Math.floor(Date.now() / 1000), model: "fake-model", choices: [{ index: 0, message, finish_reason: "text" in reply ? "stop" : "tool_calls" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    }
    return new Response(sseStream(frames(reply)), { headers: { "content-type": "text/event-stream" } });
  });
  return { ...server, requests, chatRequests };
}
