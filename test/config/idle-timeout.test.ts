// [agent] event_idle_timeout_seconds: a default of 1800 s, 0 turns the bound off, and anything else
// that is not a whole number of seconds is refused, the same way in TOML and in .env.
import { afterAll, describe, expect, test } from "bun:test";
import { parse as parseToml } from "smol-toml";
import { DEFAULT_AGENT } from "../../src/config/defaults.ts";
import { starterToml } from "../../src/config/starter.ts";
import { cleanupTempDirs, env, expectProblem, load, toml, wd } from "./helpers.ts";

afterAll(cleanupTempDirs);

const ENV_WORKDIR = "WORKDIR_01_ALIAS=docs\nWORKDIR_01_PATH=/srv/data\n";

describe("event_idle_timeout_seconds", () => {
  test("absent: the 1800 s default, in both formats", async () => {
    expect(DEFAULT_AGENT.event_idle_timeout_seconds).toBe(1800);
    expect((await load(toml(wd("docs")))).registry.agent.event_idle_timeout_seconds).toBe(1800);
    expect((await load(env(ENV_WORKDIR))).registry.agent.event_idle_timeout_seconds).toBe(1800);
  });

  test("0 turns the idle bound off (null in the registry); another value is kept", async () => {
    expect((await load(toml(`[agent]\nevent_idle_timeout_seconds = 0\n${wd("docs")}`))).registry.agent.event_idle_timeout_seconds).toBeNull();
    expect((await load(env(`${ENV_WORKDIR}SERVERFS_AGENT_EVENT_IDLE_TIMEOUT_SECONDS=0\n`))).registry.agent.event_idle_timeout_seconds).toBeNull();
    expect((await load(toml(`[agent]\nevent_idle_timeout_seconds = 1800\n${wd("docs")}`))).registry.agent.event_idle_timeout_seconds).toBe(1800);
    expect((await load(env(`${ENV_WORKDIR}SERVERFS_AGENT_EVENT_IDLE_TIMEOUT_SECONDS=1800\n`))).registry.agent.event_idle_timeout_seconds).toBe(1800);
  });

  test("a negative or fractional value is refused, naming the key", async () => {
    await expectProblem(toml(`[agent]\nevent_idle_timeout_seconds = -1\n${wd("docs")}`), "agent.event_idle_timeout_seconds", "0 (no idle timeout) or a positive integer, got -1");
    await expectProblem(toml(`[agent]\nevent_idle_timeout_seconds = 1.5\n${wd("docs")}`), "agent.event_idle_timeout_seconds", "0 (no idle timeout) or a positive integer");
    await expectProblem(toml(`[agent]\nevent_idle_timeout_seconds = "600"\n${wd("docs")}`), "agent.event_idle_timeout_seconds", "got a string");
  });

  test("the starter config shows the default and how to turn it off", () => {
    const text = starterToml("/srv/data");
    expect(text).toContain("# event_idle_timeout_seconds = 1800  # a turn silent this long ends AGENT_IDLE_TIMEOUT; 0 = never");
    // Uncommented, the line is valid TOML that sets the default.
    const line = text.split("\n").find((l) => l.startsWith("# event_idle_timeout_seconds"))!.slice(2);
    expect(parseToml(line)).toEqual({ event_idle_timeout_seconds: 1800 });
  });
});
