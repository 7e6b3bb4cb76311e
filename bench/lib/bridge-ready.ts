// Wait for a just-spawned Bridge to answer, as every Bridge bench does before measuring.
import type { BridgeClient } from "../../src/bridge/ipc/client.ts";

/** Poll bridge.status every 25 ms until it answers; throw after ~10 s. */
export async function untilBridgeAnswers(client: BridgeClient): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await client.call("bridge.status", {});
      return;
    } catch {
      if (i > 400) throw new Error("bridge did not start");
      await Bun.sleep(25);
    }
  }
}
