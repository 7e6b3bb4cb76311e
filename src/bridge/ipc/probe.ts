// One bounded connect attempt to a unix socket path, the socket torn down whatever happens. The
// Bridge uses it to tell a stale socket file from a live Bridge before unlinking anything, and
// doctor to report whether the Bridge is listening; each maps the outcome its own way.
import net from "node:net";
import { errnoCode } from "../../errors.ts";

/** `connected`; `timeout` (neither connected nor refused in time); or the connect error's errno code. */
export type SocketProbe = { outcome: "connected" } | { outcome: "timeout" } | { outcome: "error"; code: string | undefined };

export function probeSocket(socketPath: string, timeoutMs: number): Promise<SocketProbe> {
  return new Promise((resolve) => {
    const s = net.connect({ path: socketPath });
    const done = (r: SocketProbe) => {
      clearTimeout(timer);
      s.removeAllListeners();
      s.on("error", () => {});
      s.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ outcome: "timeout" }), timeoutMs);
    s.once("connect", () => done({ outcome: "connected" }));
    s.once("error", (err) => done({ outcome: "error", code: errnoCode(err) }));
  });
}
