// A scripted OpenAI Responses API endpoint (SSE streaming) on 127.0.0.1, for the real
// `codex app-server` and codex-acp through a custom model provider. The newest input item decides:
// a tool result (function_call_output / custom_tool_call_output) gets "tool finished: ..."; otherwise
// the script language (script.ts), in Codex's dialect, which follows the tools the request offers.
import { decideFromPrompts, ownText, serveOnLoopback, sseStream, textOf, toolResultReply, type Dialect, type Reply, type ScriptedModel } from "./script.ts";

interface InputItem {
  type?: string;
  role?: string;
  content?: unknown;
  output?: unknown;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const psQuote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * Codex's shell tool: `exec_command {cmd}` in current cores, `shell {command: argv}` in older ones,
 * and `shell_command {command}` (a PowerShell command line) in its Windows builds.
 */
function codexShell(command: string, tools: readonly string[]) {
  if (!tools.includes("exec_command") && tools.includes("shell_command")) return { tool: "shell_command", args: { command } };
  if (!tools.includes("exec_command") && tools.includes("shell")) return { tool: "shell", args: { command: ["bash", "-lc", command] } };
  return { tool: "exec_command", args: { cmd: command } };
}

/** The file write as a command in the shell the offered tool runs (PowerShell for shell_command). */
function codexWrite(file: string, content: string, tools: readonly string[]) {
  if (!tools.includes("exec_command") && tools.includes("shell_command")) {
    return codexShell(`Set-Content -NoNewline -LiteralPath ${psQuote(file)} -Value ${psQuote(content)}`, tools);
  }
  return codexShell(`printf '%s' ${quote(content)} | tee ${quote(file)}`, tools);
}

export const CODEX_DIALECT: Dialect = {
  // A file write as a command, so the operator's approval settings (an exec-policy rule for `tee`,
  // or approval_policy = "untrusted") make Codex ask; apply_patch inside the workspace never asks.
  write: codexWrite,
  shell: codexShell,
  ask: (question, tools) =>
    tools.includes("request_user_input")
      ? {
          tool: "request_user_input",
          args: {
            questions: [
              {
                id: "colour",
                header: "Colour",
                question,
                options: [
                  { label: "Red (Recommended)", description: "the warm one" },
                  { label: "Blue", description: "the cool one" },
                ],
              },
            ],
          },
        }
      : null,
};

/** The user's own prompts (Codex also sends its environment context as user-role items in <tags>). */
export function userPrompts(input: InputItem[]): string[] {
  return input
    .filter((i) => (i.type === "message" || i.type === undefined) && i.role === "user")
    .map((i) => ownText(textOf(i.content)))
    .filter((t) => t.length > 0);
}

function decide(input: InputItem[], tools: string[], dialect: Dialect): Reply {
  const last = input[input.length - 1];
  if (last?.type === "function_call_output" || last?.type === "custom_tool_call_output") {
    return toolResultReply(typeof last.output === "string" ? last.output : JSON.stringify(last.output ?? ""));
  }
  return decideFromPrompts(userPrompts(input), dialect, tools);
}

function frames(reply: Reply, model: string): string[] {
  const id = `resp_${crypto.randomUUID().replace(/-/g, "")}`;
  const itemId = `item_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model, status: "in_progress", output: [] };
  const events: Array<[string, Record<string, unknown>]> = [["response.created", { type: "response.created", response }]];
  let item: Record<string, unknown>;
  if ("text" in reply) {
    item = { type: "message", id: itemId, role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] };
    events.push(["response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } }]);
    events.push(["response.output_text.delta", { type: "response.output_text.delta", item_id: itemId, output_index: 0, content_index: 0, delta: reply.text }]);
  } else {
    item = { type: "function_call", id: itemId, call_id: `call_${crypto.randomUUID().slice(0, 8)}`, name: reply.tool, arguments: JSON.stringify(reply.args), status: "completed" };
    events.push(["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }]);
  }
  events.push(["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }]);
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  events.push(["response.completed", { type: "response.completed", response: { ...response, status: "completed", output: [item], usage } }]);
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function startResponsesModel(dialect: Dialect = CODEX_DIALECT): ScriptedModel {
  const requests: ScriptedModel["requests"] = [];
  const server = serveOnLoopback(async (req, url) => {
    if (req.method === "GET" && url.pathname.endsWith("/models")) return Response.json({ object: "list", data: [] });
    if (req.method !== "POST" || !url.pathname.endsWith("/responses")) return new Response("not found", { status: 404 });
    const raw = await req.text();
    const body = JSON.parse(raw) as { input?: InputItem[]; tools?: Array<{ name?: string; type?: string }>; model?: string };
    const input = Array.isArray(body.input) ? body.input : [];
    const tools = (body.tools ?? []).map((t) => t.name ?? t.type ?? "").filter((n) => n.length > 0);
    const model = typeof body.model === "string" ? body.model : "";
    requests.push({ prompts: userPrompts(input), tools, model, raw });
    return new Response(sseStream(frames(decide(input, tools, dialect), model)), { headers: { "content-type": "text/event-stream" } });
  });
  return { ...server, requests };
}
