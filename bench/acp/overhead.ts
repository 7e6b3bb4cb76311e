// What the Bridge + generic ACP adapter add to one task, measured against a bare SDK client
// driving the same fixture agent in the same run (interleaved, so machine load hits both alike).
//   baseline: Bun.spawn the agent, initialize, session/new, session/prompt, end stdin, await exit.
//   adapter:  the AcpAdapter alone with a recording TaskContext (contained spawn, handshake, turn,
//             proved stop) — splits the adapter's share from the Bridge service's.
//   serverfs: task.submit → task terminal through the real Bridge service: lease + guard, contained
//             spawn, handshake, session id persisted, events stored, result stored, proved stop.
// Target: ≤ 10 ms added at p50. Both submit→terminal and submit→proved-stop (lease free) are shown.
//
// usage: bun bench/acp/overhead.ts [iterations]
import * as acp from "@agentclientprotocol/sdk";
import path from "node:path";
import { startAcpRig } from "../../test/runtimes/service-rig.ts";
import { makeRig, profileFor } from "../../test/runtimes/acp/harness.ts";
import { fmtMs, machineLine, percentile } from "../lib/machine.ts";

const FIXTURE = path.resolve(import.meta.dir, "../../test/fixtures/acp/scripted-agent.ts");
const PROMPT = "text the quick brown fox";

async function bareClient(cwd: string): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, FIXTURE], { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      proc.stdin.write(chunk);
      await proc.stdin.flush();
    },
  });
  let text = "";
  const conn = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") text += params.update.content.text;
    })
    .connect(acp.ndJsonStream(output, proc.stdout));
  await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  await conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: PROMPT }] });
  proc.stdin.end();
  await proc.exited;
  if (text !== "the quick brown fox") throw new Error("baseline got the wrong answer");
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 30);
  const rig = await startAcpRig([profileFor("scripted-agent.ts", [], { id: "bench" })]);
  const direct = makeRig();
  const adapter = direct.adapter(profileFor("scripted-agent.ts"));
  const base: number[] = [];
  const alone: number[] = [];
  const ours: number[] = [];
  const released: number[] = [];
  try {
    // Warm both paths (module cache, sqlite pages) before measuring.
    await bareClient(rig.workdir);
    await adapter.run(direct.task(PROMPT));
    await rig.waitTerminal(await rig.submit("acp-bench", PROMPT));
    for (let i = 0; i < iterations; i++) {
      base.push(await bareClient(rig.workdir));
      const a0 = performance.now();
      const r = await adapter.run(direct.task(PROMPT));
      alone.push(performance.now() - a0);
      if (r.finalResponse !== "the quick brown fox") throw new Error("adapter got the wrong answer");
      const t0 = performance.now();
      const id = await rig.submit("acp-bench", PROMPT);
      const done = await rig.waitFor(id, (t) => t.status === "succeeded" || t.status === "failed");
      ours.push(performance.now() - t0);
      // The lease is released only after the proved stop: that is the fair twin of the baseline's
      // `await proc.exited`, and it keeps iterations from overlapping.
      while (rig.service.activeCount() > 0) await Bun.sleep(1);
      released.push(performance.now() - t0);
      if (done.final_response !== "the quick brown fox") throw new Error(`serverfs got ${String(done.error_code)}`);
    }
  } finally {
    await rig.stop();
    direct.cleanup();
  }
  base.sort((a, b) => a - b);
  ours.sort((a, b) => a - b);
  alone.sort((a, b) => a - b);
  released.sort((a, b) => a - b);
  console.log(machineLine());
  console.log(`iterations: ${iterations} (interleaved), load average ${(await Bun.file("/proc/loadavg").text().catch(() => "n/a")).split(" ").slice(0, 3).join(" ")}`);
  console.log(`bare SDK client       p50 ${fmtMs(percentile(base, 50))}  p90 ${fmtMs(percentile(base, 90))}`);
  console.log(`adapter alone         p50 ${fmtMs(percentile(alone, 50))}  p90 ${fmtMs(percentile(alone, 90))}`);
  console.log(`serverfs submit→done  p50 ${fmtMs(percentile(ours, 50))}  p90 ${fmtMs(percentile(ours, 90))}`);
  console.log(`serverfs submit→stop proved p50 ${fmtMs(percentile(released, 50))}  p90 ${fmtMs(percentile(released, 90))}`);
  console.log(`added at p50 (terminal):     ${fmtMs(percentile(ours, 50) - percentile(base, 50))} (target ≤ 10 ms)`);
  console.log(`added at p50 (stop proved):  ${fmtMs(percentile(released, 50) - percentile(base, 50))}`);
}

await main();
