// RPC round trip over the Bridge's unix socket (a real `serverfs bridge` process), against a bare
// NDJSON echo server on a unix socket in the same run. Both measured from this process with the
// same framing: one persistent connection (sequential requests), and one connection per call
// (what `serve`'s agent tools do).
import net from "node:net";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { machineLine } from "../lib/machine.ts";
import { pct, spawnBridge, summary } from "./common.ts";

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

console.log(machineLine());
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

// The Bridge under test, and optionally a baseline build (BASELINE=path/to/serverfs, e.g. the
// previous commit compiled) measured in the same run and alternated with it, so load drift on a
// shared machine hits both alike. CANDIDATE picks a compiled binary for the side under test.
async function measureBridge(binary: string | undefined): Promise<{ persistent: number[]; perCall: number[] }> {
  const bridge = await spawnBridge(1, {}, binary);
  try {
    return {
      persistent: await persistent(bridge.socketPath, req("bridge.status"), N),
      perCall: await perCall(bridge.client, "bridge.status", Math.min(N, 2000)),
    };
  } finally {
    await bridge.stop();
  }
}

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const sides: Array<{ label: string; binary: string | undefined }> = [{ label: "candidate", binary: process.env.CANDIDATE }];
if (process.env.BASELINE) sides.push({ label: "baseline ", binary: process.env.BASELINE });
const samples = new Map(sides.map((s) => [s.label, { persistent: [] as number[], perCall: [] as number[] }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
    const r = await measureBridge(side.binary);
    samples.get(side.label)!.persistent.push(...r.persistent);
    samples.get(side.label)!.perCall.push(...r.perCall);
  }
}

console.log(summary("baseline echo server, persistent connection", echoPersistent));
console.log(summary("baseline echo server, connection per call   ", echoPerCall));
for (const side of sides) {
  const s = samples.get(side.label)!;
  console.log(summary(`Bridge ${side.label} bridge.status, persistent connection`, s.persistent));
  console.log(summary(`Bridge ${side.label} bridge.status, connection per call  `, s.perCall));
}
if (process.env.BASELINE) {
  const p50 = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 50);
  const p99 = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 99);
  const c = samples.get("candidate")!;
  const b = samples.get("baseline ")!;
  for (const kind of ["persistent", "perCall"] as const) {
    console.log(
      `candidate/baseline ${kind}: p50 ×${(p50(c[kind]) / p50(b[kind])).toFixed(3)} p99 ×${(p99(c[kind]) / p99(b[kind])).toFixed(3)}`,
    );
  }
}
