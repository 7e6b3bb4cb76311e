// End-to-end symlink-swap race through a real `serve` process: while a racer process keeps
// swapping a directory inside the workdir with a symlink to a directory outside it, a client
// reads, stats and lists through that name. No answer may ever contain the outside secret;
// every failure must be a defined code. (The fs layer runs the 10,000-attempt version.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { bareEnv, connectServe } from "../support/mcp.ts";
import { repetitions } from "../support/stress.ts";
import { removeDir, tempDir } from "./helpers.ts";

/** At least this many rounds (the stress lane: 1,000), and on until both outcomes were seen. */
const ATTEMPTS = repetitions(100, 1000);
const ATTEMPTS_CAP = 5000;
const SECRET = "OUTSIDE-SECRET-9d1e";
const ALLOWED_CODES = new Set(["SYMLINK_NOT_ALLOWED", "PATH_NOT_FOUND", "NOT_A_DIRECTORY", "FILE_CHANGED_DURING_READ"]);

let base: string;
beforeAll(() => {
  base = tempDir();
  const wd = path.join(base, "wd");
  fs.mkdirSync(path.join(wd, "real"), { recursive: true });
  fs.writeFileSync(path.join(wd, "real", "data.txt"), "inside\n");
  fs.mkdirSync(path.join(base, "outside"));
  fs.writeFileSync(path.join(base, "outside", "data.txt"), `${SECRET}\n`);
  fs.symlinkSync(path.join(base, "outside"), path.join(wd, "link"));
});
afterAll(() => removeDir(base));

test(`${ATTEMPTS} reads through a name swapped between a directory and an escaping symlink never leak`, async () => {
  const wd = path.join(base, "wd");
  // The racer swaps wd/sub between the real directory and the symlink as fast as it can.
  const racerScript = `
    const fs = require("node:fs");
    const wd = ${JSON.stringify(wd)};
    const stopFile = wd + "/../stop";
    let n = 0;
    while (!fs.existsSync(stopFile)) {
      try { fs.renameSync(wd + "/real", wd + "/sub"); fs.renameSync(wd + "/sub", wd + "/real"); } catch {}
      try { fs.renameSync(wd + "/link", wd + "/sub"); fs.renameSync(wd + "/sub", wd + "/link"); } catch {}
      n++;
    }
    process.stdout.write(String(n));
  `;
  const racer = Bun.spawn([process.execPath, "-e", racerScript], { stdout: "pipe", stderr: "inherit" });
  const { client } = await connectServe({ args: ["--workdir", `wd=${wd}`], cwd: base, env: bareEnv(base), clientName: "race", listTools: false });
  const outcomes = new Map<string, number>();
  try {
    const bothSeen = () => (outcomes.get("ok") ?? 0) > 0 && (outcomes.get("SYMLINK_NOT_ALLOWED") ?? 0) + (outcomes.get("PATH_NOT_FOUND") ?? 0) > 0;
    for (let i = 0; i < ATTEMPTS || (!bothSeen() && i < ATTEMPTS_CAP); i++) {
      const calls = [
        client.callTool({ name: "read_text_file", arguments: { workdir: "wd", path: "sub/data.txt" } }),
        client.callTool({ name: "stat_file", arguments: { workdir: "wd", path: "sub/data.txt" } }),
        client.callTool({ name: "list_directory", arguments: { workdir: "wd", path: "sub" } }),
        client.callTool({ name: "search_text", arguments: { workdir: "wd", query: "OUTSIDE", path: "sub" } }),
      ];
      for (const res of (await Promise.all(calls)) as CallToolResult[]) {
        expect(JSON.stringify(res)).not.toContain(SECRET);
        if (res.isError) {
          const code = (res.structuredContent as { code: string }).code;
          expect(ALLOWED_CODES.has(code) ? code : `unexpected ${code}`).toBe(code);
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
        } else {
          outcomes.set("ok", (outcomes.get("ok") ?? 0) + 1);
          const sc = res.structuredContent as { content?: string; matches?: unknown[] };
          if (sc.content !== undefined) expect(sc.content).toBe("inside\n");
          if (sc.matches !== undefined) expect(sc.matches).toEqual([]);
        }
      }
    }
  } finally {
    fs.writeFileSync(path.join(base, "stop"), "");
    await client.close();
  }
  const swaps = Number(await new Response(racer.stdout).text());
  await racer.exited;
  // The race really ran, and both sides of it were observed.
  expect(swaps).toBeGreaterThan(0);
  expect(outcomes.get("ok") ?? 0).toBeGreaterThan(0);
  expect((outcomes.get("SYMLINK_NOT_ALLOWED") ?? 0) + (outcomes.get("PATH_NOT_FOUND") ?? 0)).toBeGreaterThan(0);
  expect(fs.readFileSync(path.join(base, "outside", "data.txt"), "utf8")).toBe(`${SECRET}\n`);
});
