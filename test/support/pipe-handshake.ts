// The client's half of the Windows endpoint's handshake (src/bridge/ipc/handshake.ts) on a raw
// LineSocket, for tests that then misbehave on an authenticated connection.
import { ClientHandshake } from "../../src/bridge/ipc/handshake.ts";
import type { LineSocket } from "./line-socket.ts";

const bytes = (line: Record<string, unknown>) => Buffer.from(JSON.stringify(line), "utf8");

/** Read the server's hello, prove the token, and check the server's proof (throws if it fails). */
export async function authenticate(peer: LineSocket, token: string): Promise<void> {
  const client = new ClientHandshake(token);
  await peer.send(client.respond(bytes(await peer.next())));
  client.confirm(bytes(await peer.next()));
}
