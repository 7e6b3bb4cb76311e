// Strict command lines through the real CLI: the --workdir mode suffix, enum and range flags,
// "did you mean", and help for nested subcommands. Each usage error is one line on stderr,
// exit 2, nothing on stdout; each names the fix.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { rawServe, type RawReply } from "../support/raw-serve.ts";
import { CLI_ARGV, runCli } from "../support/proc.ts";

const dirs: string[] = [];
const spawned: { kill(signal?: number): void; exitCode: number | null }[] = [];
afterAll(() => {
  for (const p of spawned) if (p.exitCode === null) p.kill(9);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function sandbox(): { dir: string; env: Record<string, string> } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-usage-")));
  dirs.push(dir);
  // A Bridge, if anything asked one, would be looked for here: never a real user's.
  return { dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, XDG_STATE_HOME: path.join(dir, "state") } };
}

function usageError(args: string[]): { code: number; stdout: string; line: string; lines: number } {
  const sb = sandbox();
  const r = runCli(args, { cwd: sb.dir, env: sb.env });
  return { code: r.code, stdout: r.stdout, line: r.stderr.trimEnd(), lines: r.stderr.trimEnd().split("\n").length };
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const content = (r: RawReply | undefined) => r?.result?.structuredContent as Record<string, unknown>;

/** serve with one --workdir, then list_workdirs, stat of its root and a create; what each answered. */
async function served(spec: string, cwd: string, args = ["--workdir", spec]): Promise<{ access: unknown; rootType: unknown; create: Record<string, unknown> }> {
  const s = rawServe(args, cwd, spawned);
  await s.ready;
  s.send(call(2, "list_workdirs", {}), call(3, "stat_file", { workdir: "app", path: "" }), call(4, "create_text_file", { workdir: "app", path: "new.txt", content: "written" }));
  await s.until([2, 3, 4]);
  const byId = (id: number) => content(s.replies.find((r) => r.id === id));
  const listed = (byId(2).workdirs as Array<Record<string, unknown>>).find((w) => w.alias === "app");
  const created = s.replies.find((r) => r.id === 4);
  // With no read-write workdir the mutation tools are not listed at all: "unknown tool".
  const result = { access: listed?.access, rootType: byId(3).type, create: created?.error ? { rpc_error: created.error.message } : byId(4) };
  expect(await s.close()).toBe(0);
  return result;
}

describe("--workdir ALIAS=PATH[:MODE]", () => {
  test.each([":RW", ":rw", ":Rw"])("%s: read-write, and the suffix is not part of the path", async (suffix) => {
    const { dir } = sandbox();
    fs.mkdirSync(path.join(dir, "app"));
    const r = await served(`app=${path.join(dir, "app")}${suffix}`, dir);
    expect(r.access).toBe("read-write");
    expect(r.rootType).toBe("directory");
    expect(r.create.created).toBe(true);
    expect(fs.readFileSync(path.join(dir, "app", "new.txt"), "utf8")).toBe("written");
  }, 30_000);

  test.each([":ro", ":RO"])("%s: read-only, and a create is refused (no mutation tool is listed)", async (suffix) => {
    const { dir } = sandbox();
    fs.mkdirSync(path.join(dir, "app"));
    const r = await served(`app=${path.join(dir, "app")}${suffix}`, dir);
    expect(r.access).toBe("read-only");
    expect(r.rootType).toBe("directory");
    expect(r.create).toEqual({ rpc_error: "unknown tool" });
    expect(fs.existsSync(path.join(dir, "app", "new.txt"))).toBe(false);
  }, 30_000);

  test("/data/x:2024 is a path: the directory named 'x:2024' is served, read-only", async () => {
    const { dir } = sandbox();
    fs.mkdirSync(path.join(dir, "x:2024"));
    const r = await served(`app=${path.join(dir, "x:2024")}`, dir);
    expect([r.access, r.rootType, r.create]).toEqual(["read-only", "directory", { rpc_error: "unknown tool" }]);
  }, 30_000);

  test("a path ending in ':letters' is served when a mode follows it", async () => {
    const { dir } = sandbox();
    fs.mkdirSync(path.join(dir, "x:rx"));
    const r = await served(`app=${path.join(dir, "x:rx")}:rw`, dir);
    expect([r.access, r.rootType, r.create.created]).toEqual(["read-write", "directory", true]);
    expect(fs.readFileSync(path.join(dir, "x:rx", "new.txt"), "utf8")).toBe("written");
  }, 30_000);

  test("C:\\x is a path, kept whole (connect writes it back unchanged)", () => {
    const sb = sandbox();
    const r = runCli(["connect", "cursor", "--workdir", "win=C:\\x", "--npx"], { cwd: sb.dir, env: sb.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).mcpServers.serverfs.args).toEqual(["-y", "serverfs", "serve", "--workdir", "win=C:\\x"]);
  });

  test("connect writes a mode given in any case back as ':rw'", () => {
    const sb = sandbox();
    const r = runCli(["connect", "cursor", "--workdir", "a=/srv/a:RW", "--npx"], { cwd: sb.dir, env: sb.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).mcpServers.serverfs.args).toEqual(["-y", "serverfs", "serve", "--workdir", "a=/srv/a:rw"]);
  });

  test.each([
    ["serve", "app=/x:rx", ":rx"],
    ["serve", "app=/x:RWX", ":RWX"],
    ["connect", "app=/x:rx", ":rx"],
  ])("%s --workdir %s: USAGE_ERROR naming the flag, the value, the accepted forms and the fix", (command, spec, given) => {
    const args = command === "connect" ? ["connect", "cursor", "--workdir", spec] : ["serve", "--workdir", spec];
    const r = usageError(args);
    expect([r.code, r.stdout, r.lines]).toEqual([2, "", 1]);
    expect(r.line).toBe(
      `serverfs: ${command}: USAGE_ERROR: --workdir '${spec}': '${given}' is not a mode; give ALIAS=PATH, ALIAS=PATH:rw or ALIAS=PATH:ro ` +
        `(rw and ro in any case), or, for a path that ends in '${given}', add the mode after it: '${spec}:ro'`,
    );
  });
});

describe("enums, ranges and did-you-mean", () => {
  test.each([
    [
      ["tasks", "list", "--status", "runing"],
      "serverfs: tasks: USAGE_ERROR: --status 'runing' is not one of queued, starting, running, waiting_for_approval, waiting_for_question, succeeded, failed, cancelled, interrupted; did you mean 'running'?",
    ],
    [["serv", "--workdir", "a=/x"], "serverfs: USAGE_ERROR: unknown command 'serv'; did you mean 'serve'?"],
    [["frobnicate"], "serverfs: USAGE_ERROR: unknown command 'frobnicate' (run 'serverfs help' for the list)"],
    // --limit 0 used to reach the Bridge and exit 1 (INVALID_LIMIT) while --limit abc exited 2.
    [["tasks", "list", "--limit", "0"], "serverfs: tasks: USAGE_ERROR: --limit must be a whole number from 1 to 500, got '0'"],
    [["tasks", "list", "--limit", "501"], "serverfs: tasks: USAGE_ERROR: --limit must be a whole number from 1 to 500, got '501'"],
    [["tasks", "list", "--limit", "abc"], "serverfs: tasks: USAGE_ERROR: --limit must be a whole number from 1 to 500, got 'abc'"],
    [["tasks", "events", "t1", "--after", "-1"], "serverfs: tasks: USAGE_ERROR: --after must be a whole number, 0 or more, got '-1'"],
    [["tasks", "lst"], "serverfs: tasks: USAGE_ERROR: unknown tasks subcommand 'lst'; did you mean 'list'?"],
    [["tasks", "list", "--stauts", "running"], "serverfs: tasks: USAGE_ERROR: unknown flag '--stauts'; did you mean '--status'?"],
    [["tasks", "show"], "serverfs: tasks: USAGE_ERROR: tasks show needs a task id"],
    [["tasks", "show", "t1", "--limit", "3"], "serverfs: tasks: USAGE_ERROR: unknown flag '--limit' (run 'serverfs help tasks show' for its flags)"],
    [["service", "instal"], "serverfs: service: USAGE_ERROR: unknown service subcommand 'instal'; did you mean 'install'?"],
    [["service", "install"], "serverfs: service: USAGE_ERROR: --config FILE is required for 'service install'"],
    [["service", "status"], "serverfs: service: USAGE_ERROR: --config FILE is required for 'service status'"],
    [["service", "stop", "--allow-root"], "serverfs: service: USAGE_ERROR: unknown flag '--allow-root' (run 'serverfs help service stop' for its flags)"],
    [["connect", "cursr", "--workdir", "a=/x"], "serverfs: connect: USAGE_ERROR: unknown host 'cursr'; did you mean 'cursor'?"],
    [["connect", "cursor", "--workdir", "a=/x", "--scope", "usr"], "serverfs: connect: USAGE_ERROR: --scope 'usr' is not one of user, project; did you mean 'user'?"],
    [["help", "tasks", "lis"], "serverfs: USAGE_ERROR: unknown help topic 'tasks lis'; did you mean 'list'?"],
    [["help", "doctr"], "serverfs: USAGE_ERROR: unknown help topic 'doctr'; did you mean 'doctor'?"],
  ])("%j", (args, line) => {
    const r = usageError(args);
    expect([r.code, r.stdout, r.lines, r.line]).toEqual([2, "", 1, line]);
  });
});

describe("help for every level", () => {
  const help = (...args: string[]) => {
    const sb = sandbox();
    const r = runCli(["help", ...args], { cwd: sb.dir, env: sb.env });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    return r.stdout.split("\n");
  };

  test("help help", () => {
    const lines = help("help");
    expect(lines[0]).toBe("usage: serverfs help [COMMAND] [SUBCOMMAND]");
    expect(lines).toContain("prints one line on stderr and exits 2.");
  });

  test("help tasks list", () => {
    const lines = help("tasks", "list");
    expect(lines[0]).toBe("usage: serverfs tasks list [--status STATUS] [--limit N] [--config FILE] [--json]");
    expect(lines.find((l) => l.startsWith("  --limit N "))).toBe("  --limit N        (optional) at most N tasks (default 50); a whole number from 1 to 500");
  });

  test("help service: --config is required for install and status, optional for the rest; --allow-root is there", () => {
    const lines = help("service");
    expect(lines.slice(0, 5)).toEqual([
      "usage: serverfs service install --config FILE [--allow-root]",
      "       serverfs service uninstall [--config FILE]",
      "       serverfs service start [--config FILE]",
      "       serverfs service stop [--config FILE]",
      "       serverfs service status --config FILE",
    ]);
    expect(help("service", "install").find((l) => l.startsWith("  --allow-root"))).toStartWith("  --allow-root   (optional) install even as root");
  });
});

describe("serve and bridge from a .env configuration", () => {
  const envFor = (dir: string, extra = "") => {
    fs.mkdirSync(path.join(dir, "app"));
    const file = path.join(dir, "serverfs.env");
    fs.writeFileSync(file, `WORKDIR_01_ALIAS=app\nWORKDIR_01_PATH=${path.join(dir, "app")}\nWORKDIR_01_READ_ONLY=false\n${extra}`);
    return file;
  };

  test("serve --env-file serves the file's workdirs", async () => {
    const { dir } = sandbox();
    const r = await served("", dir, ["--env-file", envFor(dir)]);
    expect([r.access, r.rootType, r.create.created]).toEqual(["read-write", "directory", true]);
    expect(fs.readFileSync(path.join(dir, "app", "new.txt"), "utf8")).toBe("written");
  }, 30_000);

  test("serve takes one source: --env-file with --workdir is a usage error", () => {
    const r = usageError(["serve", "--env-file", "x.env", "--workdir", "a=/x"]);
    expect([r.code, r.line]).toEqual([2, "serverfs: serve: USAGE_ERROR: give one of --config FILE, --env-file FILE or workdirs, not several"]);
  });

  test("bridge --env-file runs the Bridge the file describes; tasks reaches it; SIGTERM stops it", async () => {
    const sb = sandbox();
    const file = envFor(
      sb.dir,
      "WORKDIR_01_AGENT_MODE=workspace-write\nWORKDIR_01_AGENT_RUNTIMES=fake\nSERVERFS_AGENT_BRIDGE_ENABLED=true\nSERVERFS_AGENT_ENABLE_FAKE_RUNTIME=true\n",
    );
    const bridge = Bun.spawn([...CLI_ARGV, "bridge", "--env-file", file], {
      cwd: sb.dir,
      env: sb.env,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    spawned.push(bridge);
    // Ready when it logs bridge.started (the socket is listening by then).
    const reader = bridge.stderr.getReader();
    let log = "";
    while (!log.includes('"event":"bridge.started"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`bridge exited before it started: ${log}`);
      log += new TextDecoder().decode(value);
    }
    const listed = runCli(["tasks", "list", "--json"], { cwd: sb.dir, env: sb.env });
    expect([listed.code, listed.stderr, JSON.parse(listed.stdout).tasks]).toEqual([0, "", []]);
    bridge.kill("SIGTERM");
    expect(await bridge.exited).toBe(0);
  }, 60_000);
});
