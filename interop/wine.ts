// `npm run interop:wine [agent ...]`: the interop suite on the agents' Windows builds, under Wine.
// A Linux pipe on a Wine process's stdin reads as EOF to Windows Bun, so the suite's driver must
// itself be a Windows process: this Linux launcher prepares everything (the Windows lane's Wine,
// shim and pinned Windows Bun, the Windows serverfs executable, each agent's Windows package) and
// then runs `wine bun.exe interop/run.ts` in a private copy of the lane's prefix, so a concurrent
// Windows lane run keeps its own wineserver. The driver writes interop/results/wine.json and the
// Windows table of docs/acp-profiles.md; its exit code is this command's.
import fs from "node:fs";
import path from "node:path";
import { AGENTS } from "./agents/index.ts";
import { cacheRoot, ensureInstalled, ensurePacked } from "./install.ts";

const REPO = path.resolve(import.meta.dir, "..");
const log = (s: string) => console.error(`[interop:wine] ${s}`);

async function sh(argv: string[], env: Record<string, string | undefined> = process.env, out: "inherit" | "ignore" = "inherit"): Promise<number> {
  return Bun.spawn(argv, { cwd: REPO, env, stdin: "ignore", stdout: out, stderr: "inherit" }).exited;
}

/** The lane's settings, read from env.sh itself so the two never disagree. */
async function laneEnv(): Promise<{ wine: string; bunExe: string; prefix: string }> {
  const p = Bun.spawn(["bash", "-c", 'source scripts/windows-lane/env.sh && echo "$(lane_wine)" && echo "$BUN_EXE" && echo "$WINEPREFIX"'], { cwd: REPO, stdout: "pipe", stderr: "inherit" });
  const [wine, bunExe, prefix] = (await new Response(p.stdout).text()).trim().split("\n");
  if ((await p.exited) !== 0 || !wine || !bunExe || !prefix) throw new Error("scripts/windows-lane/env.sh gave no wine (run scripts/windows-lane/install.sh)");
  return { wine, bunExe, prefix };
}

const winPath = (p: string) => `Z:${p.replace(/\//g, "\\")}`;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const win = AGENTS.filter((a) => a.windows);
  const bad = args.filter((a) => !win.some((s) => s.name === a));
  if (bad.length > 0) {
    log(`no Windows executable on npm for: ${bad.join(", ")}; with one: ${win.map((a) => a.name).join(", ")}`);
    return 2;
  }
  let lane = await laneEnv().catch(() => null);
  if (!lane || !fs.existsSync(lane.bunExe) || !fs.existsSync(path.join(lane.prefix, "system.reg"))) {
    if ((await sh(["bash", "scripts/windows-lane/install.sh"])) !== 0) return 1;
    lane = await laneEnv();
  }
  if ((await sh([process.execPath, "build/compile.ts", "windows-x64"], process.env, "ignore")) !== 0) {
    log("build/compile.ts windows-x64 failed");
    return 1;
  }
  for (const a of args.length > 0 ? win.filter((s) => args.includes(s.name)) : win) {
    await ensurePacked(a.windows!.pkg, a.windows!.version, log);
    // A Node-script agent's own package installs as on Linux (npm runs here, not under Wine).
    if (a.windows!.script && a.source === "cache") await ensureInstalled(a.pkg, a.version, log);
  }
  // The private prefix is copied once (the shim included) and reused by later runs.
  const prefix = path.join(cacheRoot(), "wine-prefix");
  if (!fs.existsSync(path.join(prefix, "system.reg"))) {
    log(`copying the lane's Wine prefix to ${prefix}`);
    fs.rmSync(`${prefix}.tmp`, { recursive: true, force: true });
    if ((await sh(["cp", "-a", lane.prefix, `${prefix}.tmp`])) !== 0) return 1;
    fs.renameSync(`${prefix}.tmp`, prefix);
  }
  const env: Record<string, string | undefined> = {
    ...process.env,
    WINEPREFIX: prefix,
    WINEARCH: "win64",
    WINEDEBUG: process.env.WINEDEBUG ?? "-all",
    WINEDLLOVERRIDES: process.env.WINEDLLOVERRIDES ?? "mscoree,mshtml,winemenubuilder.exe=",
    // The driver finds the unpacked Windows packages through cacheRoot() (install.ts).
    XDG_CACHE_HOME: winPath(path.dirname(cacheRoot())),
  };
  // The lane's prefix reports Windows 7 (6.1.7601); the agents' runtimes (Node.js in Copilot's
  // executable) refuse anything below Windows 10, which is also what they support.
  if ((await sh([lane.wine, "winecfg", "-v", "win10"], env, "ignore")) !== 0) log("winecfg -v win10 failed");
  // Output to files, not pipes: Wine's background services inherit the descriptors and would hold
  // a pipe open forever (as in scripts/windows-lane/run.sh).
  const outFile = path.join(cacheRoot(), "wine-driver.out");
  const errFile = path.join(cacheRoot(), "wine-driver.err");
  for (const f of [outFile, errFile]) fs.rmSync(f, { force: true });
  log(`running wine bun.exe interop/run.ts ${args.join(" ")} (progress in ${errFile})`);
  const driver = Bun.spawn([lane.wine, lane.bunExe, "interop/run.ts", ...args], { cwd: REPO, env, stdin: "ignore", stdout: Bun.file(outFile), stderr: Bun.file(errFile) });
  const code = await driver.exited;
  // Stop this prefix's wineserver and its services, so nothing of the run outlives it.
  const server = [path.join(path.dirname(lane.wine), "wineserver64"), path.join(path.dirname(lane.wine), "wineserver")].find((p) => fs.existsSync(p));
  if (server) await sh([server, "-k"], env);
  const clean = (f: string) => fs.readFileSync(f, "utf8").replace(/\r/g, "").split("\n").filter((l) => !l.startsWith("Internal error: directory mismatch")).join("\n");
  process.stderr.write(clean(errFile));
  process.stdout.write(clean(outFile));
  return code;
}

process.exit(await main());
