// A scripted Gemini API endpoint on 127.0.0.1 (`models/<m>:streamGenerateContent?alt=sse`, plus
// `:generateContent` and `:countTokens`), for Gemini CLI via GOOGLE_GEMINI_BASE_URL. The newest
// content decides: a functionResponse gets "tool finished: ..."; a request without function
// declarations (routing, next-speaker and summary calls) gets "Fixture"; otherwise the script
// language (script.ts) in the given dialect.
import { decideFromPrompts, ownText, serveOnLoopback, sseStream, toolResultReply, type Dialect, type Reply, type ScriptedModel } from "./script.ts";

type Part = { text?: string; functionCall?: unknown; functionResponse?: { name?: string; response?: unknown } };
interface Content {
  role?: string;
  parts?: Part[];
}

export function userPrompts(contents: Content[]): string[] {
  const out: string[] = [];
  for (const c of contents) {
    if (c.role !== "user") continue;
    for (const p of c.parts ?? []) {
      const t = typeof p.text === "string" ? ownText(p.text) : "";
      if (t.length > 0) out.push(t);
    }
  }
  return out;
}

function decide(contents: Content[], tools: string[], dialect: Dialect): Reply {
  if (tools.length === 0) return { text: "Fixture" };
  const last = contents[contents.length - 1];
  const fr = last?.parts?.find((p) => p.functionResponse)?.functionResponse;
  if (fr) return toolResultReply(JSON.stringify(fr.response ?? ""));
  return decideFromPrompts(userPrompts(contents), dialect, tools);
}

function candidate(reply: Reply): Record<string, unknown> {
  const parts = "text" in reply ? [{ text: reply.text }] : [{ functionCall: { name: reply.tool, args: reply.args } }];
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "fake-model",
    responseId: crypto.randomUUID(),
  };
}

export function startGeminiModel(dialect: Dialect): ScriptedModel {
  const requests: ScriptedModel["requests"] = [];
  const server = serveOnLoopback(async (req, url) => {
    if (req.method !== "POST") return new Response("not found", { status: 404 });
    if (url.pathname.endsWith(":countTokens")) return Response.json({ totalTokens: 10 });
    const stream = url.pathname.endsWith(":streamGenerateContent");
    if (!stream && !url.pathname.endsWith(":generateContent")) return new Response("not found", { status: 404 });
    const raw = await req.text();
    const body = JSON.parse(raw) as { contents?: Content[]; tools?: Array<{ functionDeclarations?: Array<{ name?: string }> }> };
    const contents = Array.isArray(body.contents) ? body.contents : [];
    const tools = (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((d) => d.name ?? "")).filter((n) => n.length > 0);
    const model = decodeURIComponent(url.pathname.split("/models/")[1]?.split(":")[0] ?? "");
    requests.push({ prompts: userPrompts(contents), tools, model, raw });
    const reply = decide(contents, tools, dialect);
    if (!stream) return Response.json(candidate(reply));
    return new Response(sseStream([`data: ${JSON.stringify(candidate(reply))}\r\n\r\n`]), { headers: { "content-type": "text/event-stream" } });
  });
  return { ...server, requests };
}
