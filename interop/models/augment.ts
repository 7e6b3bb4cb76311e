// A minimal scripted Augment API on 127.0.0.1 for auggie, which has no custom model endpoint: an
// AUGMENT_SESSION_AUTH whose tenantURL points here makes it send its `chat-stream` calls to this
// server. `chat-stream` answers newline-delimited JSON chunks ({text, nodes, stop_reason}); a tool
// call is a response node of type 5 carrying {tool_use_id, tool_name, input_json}, and its result
// comes back as a request node's tool_result_node. `get-models` answers one model; every other
// endpoint (telemetry, indexing, feature checks) gets an empty JSON object.
import { decideFromPrompts, ownText, serveOnLoopback, sseStream, toolResultReply, type Dialect, type Reply, type ScriptedModel } from "./script.ts";

interface Exchange {
  request_message?: string;
  request_nodes?: Node[];
}
interface Node {
  type?: number;
  text_node?: { content?: string };
  tool_result_node?: { tool_use_id?: string; content?: string };
}

export const AUGGIE_DIALECT: Dialect = {
  write: (path, file_content) => ({ tool: "save-file", args: { path, file_content } }),
  shell: (command) => ({ tool: "launch-process", args: { command, wait: true, max_wait_seconds: 600, cwd: "." } }),
};

function textOfRequest(message: string | undefined, nodes: Node[] | undefined): string {
  const own = ownText(message ?? "");
  if (own) return own;
  for (const n of nodes ?? []) {
    const t = ownText(n.text_node?.content ?? "");
    if (t) return t;
  }
  return "";
}

function decide(body: { message?: string; nodes?: Node[]; chat_history?: Exchange[]; tool_definitions?: Array<{ name?: string }> }, dialect: Dialect): { reply: Reply; prompts: string[]; tools: string[] } {
  const tools = (body.tool_definitions ?? []).map((t) => t.name ?? "").filter((n) => n.length > 0);
  const result = (body.nodes ?? []).find((n) => n.tool_result_node)?.tool_result_node;
  const prompts = [...(body.chat_history ?? []).map((e) => textOfRequest(e.request_message, e.request_nodes)), textOfRequest(body.message, body.nodes)].filter((t) => t.length > 0);
  if (result) return { reply: toolResultReply(result.content ?? ""), prompts, tools };
  if (tools.length === 0) return { reply: { text: "Fixture" }, prompts, tools };
  return { reply: decideFromPrompts(prompts, dialect, tools), prompts, tools };
}

function chunks(reply: Reply): string[] {
  if ("text" in reply) return [JSON.stringify({ text: reply.text, nodes: [{ id: 0, type: 0, content: reply.text }] }), JSON.stringify({ text: "", nodes: [], stop_reason: 1 })].map((l) => `${l}\n`);
  const node = { id: 1, type: 5, content: "", tool_use: { tool_use_id: `toolu_${crypto.randomUUID().slice(0, 12)}`, tool_name: reply.tool, input_json: JSON.stringify(reply.args) } };
  return [JSON.stringify({ text: "", nodes: [node] }), JSON.stringify({ text: "", nodes: [], stop_reason: 3 })].map((l) => `${l}\n`);
}

export function startAugmentModel(dialect: Dialect = AUGGIE_DIALECT): ScriptedModel & { paths: string[] } {
  const requests: ScriptedModel["requests"] = [];
  const paths: string[] = [];
  const server = serveOnLoopback(async (req, url) => {
    const name = url.pathname.replace(/^\/+/, "");
    paths.push(name);
    const raw = req.method === "POST" ? await req.text() : "";
    if (name === "get-models") {
      return Response.json({ default_model: "fake-model", models: [{ name: "fake-model", suggested_prefix_char_count: 1000, suggested_suffix_char_count: 1000 }], languages: [], feature_flags: {}, user_tier: "ENTERPRISE_TIER" });
    }
    if (name === "chat-stream") {
      const body = JSON.parse(raw || "{}");
      const { reply, prompts, tools } = decide(body, dialect);
      requests.push({ prompts, tools, model: String(body.model ?? ""), raw });
      return new Response(sseStream(chunks(reply)), { headers: { "content-type": "application/json" } });
    }
    return Response.json({});
  });
  return { ...server, requests, paths };
}
