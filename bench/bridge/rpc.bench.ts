// RPC round trip over the Bridge's unix socket (a real `serverfs bridge` process), against a bare
// NDJSON echo server on a unix socket in the same run. Both measured from this process with the
// same framing: one persistent connection (sequential requests), and one connection per call
// (what `serve`'s agent tools do).
import net from "node:net";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { machine, spawnBridge, summary } from "./common.ts";

const N = Number(process.env.N ?? 3000);

function persistent(socketPath: string, line: (i: number) => string, n: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ path: socketPath });
    const samples: number[] = [];
    let buf = "";
    let i = 0;
    let t0 = 0;
    const send = () => {
      t0 = performance.now();
      s.write(line(i));
    };
    s.on("connect", send);
    s.on("error", reject);
    s.on("data", (d) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf("\n")) !== -1) {
        buf = buf.slice(nl + 1);
        samples.push(performance.now() - t0);
        if (++i >= n) {
          s.destroy();
          return resolve(samples.slice(Math.floor(n / 10)));
        }
        send();
      }
    });
  });
}

async function perCall(client: BridgeClient, method: "runtime.list" | "bridge.status", n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.call(method, {});
    samples.push(performance.now() - t0);
  }
  return samples.slice(Math.floor(n / 10));
}

const req = (method: string) => (i: number) => `${JSON.stringify({ protocol_version: 1, request_id: `b${i}`, method, params: {} })}\n`;

console.log(machine());
// Baseline: bare echo NDJSON server in its own process.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-echo-"));
const echoPath = path.join(dir, "echo.sock");
const echo = Bun.spawn(
  [
    process.execPath,
    "-e",
    `const q=[];Bun.listen({unix:${JSON.stringify(echoPath)},socket:{data(s,d){let b=(s.data??"")+new TextDecoder().decode(d);let nl;` +
      `while((nl=b.indexOf("\\n"))!==-1){const line=b.slice(0,nl);b=b.slice(nl+1);const r=JSON.parse(line);` +
      `s.write(JSON.stringify({request_id:r.request_id,ok:true,result:{}})+"\\n");}s.data=b;}}});console.log("up");`,
  ],
  { stdout: "pipe" },
);
await echo.stdout.getReader().read();
const echoPersistent = await persistent(echoPath, req("runtime.list"), N);
const echoPerCall = await perCall(new BridgeClient({ path: echoPath }), "runtime.list", Math.min(N, 2000));
echo.kill();
fs.rmSync(dir, { recursive: true, force: true });

const bridge = await spawnBridge(1);
const bridgePersistent = await persistent(bridge.socketPath, req("bridge.status"), N);
const bridgePerCall = await perCall(bridge.client, "bridge.status", Math.min(N, 2000));
await bridge.stop();

console.log(summary("baseline echo server, persistent connection", echoPersistent));
console.log(summary("Bridge bridge.status, persistent connection ", bridgePersistent));
console.log(summary("baseline echo server, connection per call   ", echoPerCall));
console.log(summary("Bridge bridge.status, connection per call  ", bridgePerCall));
