// The ACP stream over an agent child's stdin/stdout. Framing and JSON-RPC stay the SDK's job
// (ndJsonStream, 32 MiB per message); this file only adds what the SDK leaves to the client:
//   - the SDK answers an unparseable line (or a batch, or a non-object) with a protocol-level
//     error response (`id: null`) and carries on. For us a contaminated stdout means the agent is
//     not speaking ACP, so the first such response is reported as a protocol violation instead
//     of being written back to the agent.
//   - writes to a child that has already exited must not surface as unhandled rejections.
//   - the SDK's client validates every `session/update` against the stable schema before any
//     handler runs and drops what fails, so an update type newer than the schema would vanish
//     without a trace. Updates are therefore handed to our own handler under an internal method
//     name, in arrival order, and mapped defensively there (mapping.ts).
import * as acp from "@agentclientprotocol/sdk";
import type { FileSink } from "bun";
import { closeChildInput } from "../kernel/child-input.ts";

/** What the SDK's JSON.stringify of a protocol-level error response always starts with. */
const PROTOCOL_ERROR_PREFIX = new TextEncoder().encode('{"jsonrpc":"2.0","id":null,"error":');

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

export interface ChildPipes {
  stdin: FileSink;
  stdout: ReadableStream<Uint8Array>;
}

export interface TransportEvents {
  /** stdout carried something that is not a JSON-RPC message. Called at most once. */
  onViolation(): void;
}

/** Internal name `session/update` notifications are delivered under (never sent on the wire). */
export const RAW_SESSION_UPDATE = "_serverfs/raw_session_update";

function rerouteSessionUpdates(readable: ReadableStream<acp.AnyMessage>): ReadableStream<acp.AnyMessage> {
  return readable.pipeThrough(
    new TransformStream<acp.AnyMessage, acp.AnyMessage>({
      transform(message, controller) {
        if ("method" in message && message.method === acp.methods.client.session.update && !("id" in message)) {
          controller.enqueue({ ...message, method: RAW_SESSION_UPDATE });
        } else {
          controller.enqueue(message);
        }
      },
    }),
  );
}

export function childStream(pipes: ChildPipes, events: TransportEvents, maxMessageBytes?: number): acp.Stream {
  let violated = false;
  let inputClosed = false;
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      if (startsWith(chunk, PROTOCOL_ERROR_PREFIX)) {
        if (!violated) {
          violated = true;
          events.onViolation();
        }
        return;
      }
      if (inputClosed) return;
      try {
        pipes.stdin.write(chunk);
        await pipes.stdin.flush();
      } catch {
        // The child closed its stdin (it exited); the connection notices through stdout's end.
        inputClosed = true;
      }
    },
    close() {
      closeChildInput(pipes);
    },
  });
  const stream = acp.ndJsonStream(output, pipes.stdout, maxMessageBytes === undefined ? {} : { maxMessageBytes });
  return { writable: stream.writable, readable: rerouteSessionUpdates(stream.readable) };
}
