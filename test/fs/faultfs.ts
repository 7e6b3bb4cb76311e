// The fault-injecting FUSE passthrough (test/fixtures/faultfs/faultfs.py) as a test helper: mount
// it over a backing directory, set its rules (fail an operation with an errno, or hold it until
// released) and hear when it holds one, all through its control socket, so a test acts at an
// exact step of a real serve's write without any timing.
import fs from "node:fs";
import path from "node:path";

const SCRIPT = path.resolve(import.meta.dir, "../fixtures/faultfs/faultfs.py");
/** Debian's python3 (python3-fusepy is a Debian package; a python3 earlier on PATH may lack it). */
export const SYSTEM_PYTHON = "/usr/bin/python3";

export interface FaultRule {
  op: "read" | "write" | "create" | "open" | "fsync" | "rename" | "link" | "unlink" | "chmod" | "chown" | "truncate" | "mkdir" | "rmdir" | "readdir";
  /** fnmatch pattern of the path inside the mount, e.g. "/w/.serverfs-tmp-*". */
  path: string;
  errno?: "EIO" | "ENOSPC" | "EDQUOT" | "EACCES" | "EPERM" | "EROFS";
  hold?: boolean;
  min_offset?: number;
  once?: boolean;
}

export interface HeldEvent {
  op: string;
  path: string;
  offset: number | null;
}

export interface FaultFs {
  mount: string;
  backing: string;
  rules(rules: FaultRule[]): Promise<void>;
  /** Lets every held operation go on; resolves with how many were held. */
  release(): Promise<number>;
  /** The next operation a hold rule stopped (already stopped ones first). */
  nextHeld(): Promise<HeldEvent>;
  close(): Promise<void>;
}

/** Why the FUSE fault tests cannot run here, or null. */
export function faultFsUnavailable(): string | null {
  if (process.platform !== "linux") return "needs Linux FUSE";
  if (process.getuid?.() !== 0) return "needs root to mount";
  if (!fs.existsSync("/dev/fuse")) return "no /dev/fuse";
  if (Bun.spawnSync([SYSTEM_PYTHON, "-c", "import fusepy"]).exitCode !== 0) return "python3-fusepy is not installed (.ci/run installs it)";
  return null;
}

type Message = { ok?: boolean; released?: number; event?: string } & Partial<HeldEvent>;

/** Mounts the filesystem at `base`/mnt over `base`/backing (both created) and waits until it is up. */
export async function mountFaultFs(base: string): Promise<FaultFs> {
  const backing = path.join(base, "backing");
  const mount = path.join(base, "mnt");
  const control = path.join(base, "control.sock");
  fs.mkdirSync(backing, { recursive: true });
  fs.mkdirSync(mount, { recursive: true });
  const daemon = Bun.spawn([SYSTEM_PYTHON, SCRIPT, backing, mount, control], { stdout: "pipe", stderr: "pipe" });
  // "ready" on its stdout: mounted, and the control socket (made before the mount) is listening
  const out = await daemon.stdout.getReader().read();
  if (out.done || !new TextDecoder().decode(out.value).startsWith("ready")) {
    throw new Error(`faultfs did not come up: ${await new Response(daemon.stderr).text()}`);
  }
  if (fs.statSync(mount).dev === fs.statSync(base).dev) throw new Error("faultfs said ready, but nothing is mounted");

  const answers: ((m: Message) => void)[] = [];
  const held: HeldEvent[] = [];
  const heldWaiters: ((e: HeldEvent) => void)[] = [];
  let partial = "";
  const onMessage = (m: Message) => {
    if (m.event === "held") {
      const e = { op: m.op as string, path: m.path as string, offset: m.offset ?? null };
      const waiter = heldWaiters.shift();
      if (waiter) waiter(e);
      else held.push(e);
      return;
    }
    answers.shift()?.(m);
  };
  const s = await Bun.connect({
    unix: control,
    socket: {
      data(_s, chunk) {
        partial += chunk.toString();
        const lines = partial.split("\n");
        partial = lines.pop() as string;
        for (const line of lines) if (line !== "") onMessage(JSON.parse(line) as Message);
      },
    },
  });

  const command = (c: object): Promise<Message> =>
    new Promise<Message>((resolve) => {
      answers.push(resolve);
      s.write(`${JSON.stringify(c)}\n`);
      s.flush();
    });

  return {
    mount,
    backing,
    rules: async (rules) => {
      await command({ rules });
    },
    release: async () => (await command({ release: true })).released ?? 0,
    nextHeld: () => {
      const e = held.shift();
      if (e) return Promise.resolve(e);
      return new Promise<HeldEvent>((resolve) => heldWaiters.push(resolve));
    },
    close: async () => {
      await command({ rules: [] });
      await command({ release: true });
      s.end();
      if (Bun.spawnSync(["umount", mount]).exitCode !== 0) Bun.spawnSync(["umount", "-l", mount]);
      daemon.kill();
      await daemon.exited;
    },
  };
}
