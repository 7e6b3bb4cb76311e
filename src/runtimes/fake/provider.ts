// The fake provider: a real child process the fake runtime starts for every task, so cancellation,
// crash and containment tests exercise real process trees. It speaks NDJSON on stdin/stdout with
// the fake adapter and interprets the prompt grammar documented in ./grammar.md.
//
// Run as `bun src/runtimes/fake/provider.ts` in development, or as the hidden
// `serverfs __fake-provider` subcommand inside a compiled binary.
import fs from "node:fs";
import { IS_WINDOWS } from "../../../platform/os.ts";

type Msg = Record<string, unknown> & { type: string };

function send(msg: Msg): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

export async function runFakeProvider(): Promise<void> {
  const inbox: Msg[] = [];
  let wake: (() => void) | null = null;
  let stdinClosed = false;
  let buffered = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim()) inbox.push(JSON.parse(line) as Msg);
    }
    wake?.();
  });
  process.stdin.on("end", () => {
    stdinClosed = true;
    wake?.();
  });

  // A stubborn provider ignores cancel frames, SIGTERM and a closed stdin: only SIGKILL stops it.
  let stubborn = false;
  async function next(type?: string): Promise<Msg> {
    for (;;) {
      const i = inbox.findIndex((m) => m.type === "cancel" || type === undefined || m.type === type);
      if (i !== -1) {
        const m = inbox.splice(i, 1)[0]!;
        if (m.type === "cancel") {
          if (stubborn) continue;
          process.exit(0);
        }
        return m;
      }
      if (stdinClosed && !stubborn) process.exit(0);
      if (stdinClosed) {
        await new Promise(() => {});
      }
      await new Promise<void>((r) => (wake = r));
      wake = null;
    }
  }

  const start = await next("start");
  const taskId = String(start.task_id);
  const prompt = String(start.prompt);
  const session = typeof start.session_id === "string" ? start.session_id : `fake-session-${taskId}`;
  if (typeof start.turn_log === "string") fs.appendFileSync(start.turn_log, `${taskId} ${process.pid}\n`);
  send({ type: "ids", session_id: session, turn_id: `fake-turn-${taskId}` });
  send({ type: "event", event_type: "turn.started", payload: { runtime: "fake" } });

  const colon = prompt.indexOf(":");
  const verb = colon === -1 ? "complete" : prompt.slice(0, colon);
  const arg = colon === -1 ? prompt : prompt.slice(colon + 1);
  const result = (text: string) => send({ type: "result", text });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  const approval = async (extra: Record<string, unknown>) => {
    send({
      type: "approval",
      request: {
        category: "command",
        title: `Run ${arg}`,
        command_display: arg,
        available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"],
        ...extra,
      },
    });
    return (await next("approval_result")).resolution as Record<string, unknown>;
  };

  switch (verb) {
    case "approval": {
      const r = await approval({});
      result(`approval=${String(r.decision)}`);
      break;
    }
    case "approval-twice": {
      const a = await approval({});
      const b = await approval({});
      result(`approvals=${String(a.decision)},${String(b.decision)}`);
      break;
    }
    case "approval-on-message": {
      // Waits for a steering message, then asks one command approval for its text.
      const m = await next("message");
      const r = await approval({ title: `Run ${String(m.text)}`, command_display: String(m.text) });
      result(`approval=${String(r.decision)}`);
      break;
    }
    case "interaction-pair": {
      // Raises an approval and, without waiting for it, a question: the Bridge allows one pending
      // request per task. Reports each outcome: a decision / answer, or the refusal code.
      const question = {
        questions: [{ question_id: "q1", prompt: arg, options: [{ option_id: "a", label: "A" }], multi_select: false, allow_free_text: true }],
      };
      send({
        type: "approval",
        id: "first",
        nowait: true,
        request: { category: "command", title: `Run ${arg}`, command_display: arg, available_decisions: ["approve_once", "deny", "cancel_task"] },
      });
      send({ type: "question", id: "second", nowait: true, request: question });
      const outcome: Record<string, string> = {};
      while (outcome.first === undefined || outcome.second === undefined) {
        const m = await next();
        const id = String(m.id);
        if (m.type === "interaction_error") outcome[id] = String(m.code);
        else if (m.type === "approval_result") outcome[id] = String((m.resolution as Record<string, unknown>).decision);
        else if (m.type === "question_result") outcome[id] = "answered";
      }
      result(`first=${outcome.first} second=${outcome.second}`);
      break;
    }
    case "approval-options": {
      const r = await approval({
        response_options: [
          { option_id: "opt-allow-once", label: "Allow once", kind: "allow_once" },
          { option_id: "opt-allow-always", label: "Always allow", kind: "allow_always" },
          { option_id: "opt-reject", label: "Reject", kind: "reject_once" },
        ],
      });
      result(`option=${String(r.option_id)} decision=${String(r.decision)}`);
      break;
    }
    case "approval-perms": {
      const r = await approval({
        category: "provider_permission",
        requested_permissions: [
          { permission_id: "net", kind: "network" },
          { permission_id: "fs-write", kind: "filesystem" },
        ],
      });
      result(`decision=${String(r.decision)} granted=${(r.granted_permission_ids as string[]).join(",")}`);
      break;
    }
    case "approval-path": {
      const r = await approval({ category: "file_change", file_changes: [{ path: `${process.cwd()}/secret.txt` }], blocked_path: `${process.cwd()}2/notes.txt` });
      result(`approval=${String(r.decision)}`);
      break;
    }
    case "question": {
      send({
        type: "question",
        request: {
          questions: [
            {
              question_id: "q1",
              prompt: arg,
              options: [
                { option_id: "a", label: "A" },
                { option_id: "b", label: "B" },
              ],
              multi_select: false,
              allow_free_text: true,
            },
          ],
        },
      });
      const r = await next("question_result");
      result(JSON.stringify(r.resolution));
      break;
    }
    case "wait":
      await next("never");
      break;
    case "stubborn":
      stubborn = true;
      process.on("SIGTERM", () => {});
      send({ type: "event", event_type: "agent.message", payload: { text: "ignoring you", pids: [process.pid] } });
      await next("never");
      break;
    case "steer": {
      const m = await next("message");
      result(`steered=${String(m.text)}`);
      break;
    }
    case "sleep": {
      await sleep(Number(arg));
      result(`slept=${arg}`);
      break;
    }
    case "fail":
      send({ type: "error", code: "AGENT_PROVIDER_ERROR", message: arg });
      break;
    case "crash":
      process.exit(3);
      break;
    case "spawn":
    case "spawn-complete": {
      // Grandchildren: one in our session, the rest in new sessions (setsid), like real agent shells.
      const n = Math.max(1, Number(arg) || 1);
      const pids: number[] = [];
      for (let i = 0; i < n; i++) {
        // Windows has no sleep(1): the running executable idles instead (BUN_BE_BUN makes a
        // compiled serverfs act as bun for that one process).
        const child =
          IS_WINDOWS
            ? Bun.spawn([process.execPath, "-e", "setInterval(() => {}, 1e6)"], {
                env: { ...process.env, BUN_BE_BUN: "1" },
                stdio: ["ignore", "ignore", "ignore"],
                windowsHide: true,
              })
            : Bun.spawn(["sleep", "1000"], { detached: i > 0, stdio: ["ignore", "ignore", "ignore"] });
        child.unref();
        pids.push(child.pid);
      }
      send({ type: "event", event_type: "agent.message", payload: { text: "spawned", pids } });
      if (verb === "spawn-complete") result(`spawned=${pids.join(",")}`);
      else await next("never");
      break;
    }
    case "repeat": {
      const c2 = arg.indexOf(":");
      const count = Number(arg.slice(0, c2));
      result(arg.slice(c2 + 1).repeat(count));
      break;
    }
    case "events": {
      const n = Number(arg);
      for (let i = 0; i < n; i++) send({ type: "event", event_type: "agent.message", payload: { text: `message ${i}` } });
      result(`events=${n}`);
      break;
    }
    case "usage": {
      // An ACP-shaped usage report: tokens in context, the window, the session's cost.
      send({ type: "event", event_type: "usage.updated", payload: { used: 1500, size: 8000, cost: { amount: 0.25, currency: "USD" } } });
      result("usage");
      break;
    }
    case "env": {
      // Names only the test chose; reports presence for each comma-separated name, and one value.
      const names = arg.split(",");
      result(names.map((n) => `${n}=${process.env[n] ?? "<unset>"}`).join(" "));
      break;
    }
    case "big-events": {
      const n = Number(arg);
      for (let i = 0; i < n; i++) send({ type: "event", event_type: "agent.message", payload: { text: "x".repeat(60_000) } });
      result(`big-events=${n}`);
      break;
    }
    case "big-message": {
      const text = "界\"\\abc".repeat(Math.ceil(Number(arg) / 9));
      send({ type: "event", event_type: "agent.message", payload: { text } });
      result(text);
      break;
    }
    case "paths": {
      const cwd = process.cwd();
      send({ type: "event", event_type: "agent.message", payload: { text: `look at ${cwd}/secret.txt and ${cwd}2/notes.txt!`, cwd } });
      result(`wrote ${cwd}/result.txt.`);
      break;
    }
    case "host-paths":
    case "host-fail": {
      // Host directories the provider sees in its environment (names the test chose), each also
      // under its realpath, printed the way agents do: prose, tool locations, approvals, results.
      const dirs = arg.split(",").flatMap((n) => {
        const v = process.env[n];
        if (!v) return [];
        let real = v;
        try {
          real = fs.realpathSync(v);
        } catch {
          // not created: the given spelling only
        }
        return real === v ? [v] : [v, real];
      });
      if (verb === "host-fail") {
        send({ type: "error", code: "AGENT_PROVIDER_ERROR", message: `could not read ${dirs.map((d) => `${d}/settings.json`).join(", ")}.` });
        break;
      }
      send({ type: "event", event_type: "agent.message", payload: { text: dirs.map((d) => `extensions in ${d}/extensions.`).join(" ") } });
      send({
        type: "event",
        event_type: "tool.call",
        payload: { title: `Read ${dirs[0]}/a`, locations: dirs.map((d) => ({ path: `${d}/a`, line: 1 })), raw: { argv: ["ls", ...dirs], note: `${dirs.join(" ")} seen` } },
      });
      const r = await approval({ title: `List ${dirs.join(" ")}`, command_display: `ls ${dirs.join(" ")}`, file_changes: dirs.map((d) => ({ path: `${d}/x` })) });
      result(`decision=${String(r.decision)} ${dirs.map((d) => `(${d}/config.toml)`).join(" ")} ${"padding ".repeat(64)}`);
      break;
    }
    default:
      result(arg);
  }
  // Stay until the adapter closes stdin, so every byte of the result is read before we exit.
  await next("never");
}

if (import.meta.main) {
  await runFakeProvider();
}
