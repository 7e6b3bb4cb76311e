// An impostor holding a Bridge endpoint before the Bridge does (a "squatter"): a node:net server on
// a named pipe (Windows) or a unix socket path (POSIX), which the Bridge client reaches the same
// way. It keeps every byte each connection sent it, so a test can show what a client leaked.
// Used by test/bridge/pipe-handshake.test.ts (unix sockets) and test/platform/windows-pipe-squat.test.ts
// (a named pipe of the same user); test/platform/windows-second-user.test.ts squats as another user.
import net from "node:net";

export interface EndpointSquatter {
  /** Everything each connection sent, in connection order. */
  received(): string[];
  close(): Promise<void>;
}

/**
 * Hold `endpoint`; `onConnect` decides what the squatter says to each client (`received` is what
 * that connection has sent so far). Rejects when the endpoint cannot be held.
 */
export async function squatEndpoint(endpoint: string, onConnect: (s: net.Socket, received: () => string) => void): Promise<EndpointSquatter> {
  const received: Buffer[][] = [];
  const server = net.createServer((s) => {
    const mine: Buffer[] = [];
    received.push(mine);
    s.on("data", (d: Buffer) => mine.push(d));
    s.on("error", () => {});
    onConnect(s, () => Buffer.concat(mine).toString("latin1"));
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(endpoint, () => ok());
  });
  return {
    received: () => received.map((chunks) => Buffer.concat(chunks).toString("latin1")),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

/** The first line a squatter that plays the protocol sends: a well-formed hello with a fixed nonce. */
export const squatterHello = (nonce = "1".repeat(64)): string => `${JSON.stringify({ serverfs_handshake: "server_hello", version: 1, nonce })}\n`;

/** The proof a squatter without the token can only make up. */
export const squatterProof = (proof = "0".repeat(64)): string => `${JSON.stringify({ serverfs_handshake: "server_proof", version: 1, proof })}\n`;
