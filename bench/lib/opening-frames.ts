// The host's opening every start-up benchmark sends in one write: initialize (2025-06-18),
// notifications/initialized and tools/list, as newline-delimited JSON-RPC; tools/list has id 2.
export const OPENING_FRAMES =
  [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
  ]
    .map((f) => JSON.stringify(f))
    .join("\n") + "\n";
