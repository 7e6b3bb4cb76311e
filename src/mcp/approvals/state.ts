// The request state an elicitation round carries: which task and which pending request the form
// was about. It round-trips through the client, so it is sealed (HMAC, the SDK's codec) with a key
// that lives only in this process: a stdio connection's retries always come back to it, and a
// forged or replayed-after-expiry state is refused by the SDK before any tool runs (-32602).
import { randomBytes } from "node:crypto";
import { createRequestStateCodec, type RequestStateCodec } from "@modelcontextprotocol/server";

export interface ElicitationState {
  task_id: string;
  request_id: string;
  kind: "approval" | "question";
}

/** Long enough for a human to read the form; the Bridge's own interaction expiry still applies. */
const STATE_TTL_SECONDS = 3600;

let codec: RequestStateCodec<ElicitationState> | undefined;

export function elicitationStateCodec(): RequestStateCodec<ElicitationState> {
  codec ??= createRequestStateCodec<ElicitationState>({ key: randomBytes(32), ttlSeconds: STATE_TTL_SECONDS });
  return codec;
}
