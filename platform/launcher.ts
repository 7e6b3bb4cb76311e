// A tiny launcher that closes the Windows job-assignment race. Bun.spawn cannot create a process
// suspended, so a provider started directly could fork helpers before the parent assigns it to
// its Job Object. Instead the parent starts this launcher (the running executable itself, as
// `bun -e`; a compiled serverfs becomes the bun CLI for this one process through BUN_BE_BUN=1),
// assigns the launcher to the job, and only then writes one "go" byte on its stdin. The launcher
// reads exactly that byte, removes its own two variables from the environment, and starts the
// real provider with inherited stdio; everything the provider starts inherits the job.
// If stdin closes before "go", the launcher exits 125 without starting anything; if the provider
// cannot be started it prints one line naming only the errno and exits 127.
//
// The logic is OS-neutral (and tested on Linux); only the job assignment is Windows-specific.

export const LAUNCH_ARGV_VARIABLE = "SERVERFS_LAUNCH_ARGV";
export const GO_BYTE = 0x67;
export const LAUNCHER_NOT_RELEASED_EXIT = 125;
/** The provider executable could not be started (shells use 127 for "command not found"). */
export const LAUNCHER_SPAWN_FAILED_EXIT = 127;

export const LAUNCHER_SOURCE = `
const fs = require("node:fs");
const byte = Buffer.alloc(1);
let got = 0;
for (;;) {
  try { got = fs.readSync(0, byte, 0, 1, null); break; }
  catch (e) { if (e && e.code === "EAGAIN") continue; got = 0; break; }
}
if (got !== 1 || byte[0] !== ${GO_BYTE}) process.exit(${LAUNCHER_NOT_RELEASED_EXIT});
const argv = JSON.parse(process.env.${LAUNCH_ARGV_VARIABLE} || "[]");
delete process.env.${LAUNCH_ARGV_VARIABLE};
delete process.env.BUN_BE_BUN;
let child;
try {
  child = Bun.spawn(argv, { stdio: ["inherit", "inherit", "inherit"], env: process.env, windowsHide: true });
} catch (e) {
  process.stderr.write("serverfs launcher: could not start the provider (" + String((e && e.code) || "error") + ")\\n");
  process.exit(${LAUNCHER_SPAWN_FAILED_EXIT});
}
child.exited.then((code) => process.exit(code));
`;

/** argv and extra environment for starting the launcher for `argv`. */
export function launcherCommand(argv: readonly string[]): { argv: string[]; env: Record<string, string> } {
  return {
    argv: [process.execPath, "-e", LAUNCHER_SOURCE],
    env: { [LAUNCH_ARGV_VARIABLE]: JSON.stringify(argv), BUN_BE_BUN: "1" },
  };
}
