// cross_mounts and refuse_hardlinked_reads through the whole config pipeline: TOML ([defaults] and
// [[workdirs]]), .env (SERVERFS_* and WORKDIR_NN_*), render-config and the zero-config --workdir.
import { afterAll, describe, expect, test } from "bun:test";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import { cleanupTempDirs, env, expectProblem, load, runCli, toml, wd, writeTemp } from "./helpers.ts";

afterAll(cleanupTempDirs);

const SLOT1 = "WORKDIR_01_ALIAS=a\nWORKDIR_01_PATH=/srv/a\n";

describe("TOML", () => {
  test("defaults: cross mounts, read hard-linked files", async () => {
    const w = (await load(toml(wd("a")))).registry.workdirs[0]!;
    expect([w.cross_mounts, w.refuse_hardlinked_reads]).toEqual([true, false]);
  });

  test("[defaults] applies to every workdir; a workdir's own value wins", async () => {
    const text = `[defaults]\ncross_mounts = false\nrefuse_hardlinked_reads = true\n${wd("a", "/a")}${wd("b", "/b", "cross_mounts = true\nrefuse_hardlinked_reads = false\n")}`;
    const [a, b] = (await load(toml(text))).registry.workdirs;
    expect([a!.cross_mounts, a!.refuse_hardlinked_reads]).toEqual([false, true]);
    expect([b!.cross_mounts, b!.refuse_hardlinked_reads]).toEqual([true, false]);
  });

  for (const key of ["cross_mounts", "refuse_hardlinked_reads"]) {
    test(`${key} of the wrong type is refused, naming the key`, async () => {
      await expectProblem(toml(wd("a", "/a", `${key} = "no"\n`)), `workdirs[0].${key}`, "expected a boolean");
      await expectProblem(toml(`[defaults]\n${key} = 0\n${wd("a", "/a")}`), `defaults.${key}`, "expected a boolean");
    });
  }
});

describe(".env", () => {
  test("absent means the defaults", async () => {
    const w = (await load(env(SLOT1))).registry.workdirs[0]!;
    expect([w.cross_mounts, w.refuse_hardlinked_reads]).toEqual([true, false]);
  });

  test("globals and slot keys, every boolean spelling", async () => {
    const text = `SERVERFS_CROSS_MOUNTS=off\nSERVERFS_REFUSE_HARDLINKED_READS=yes\n${SLOT1}WORKDIR_02_ALIAS=b\nWORKDIR_02_PATH=/srv/b\nWORKDIR_02_CROSS_MOUNTS=1\nWORKDIR_02_REFUSE_HARDLINKED_READS=FALSE\n`;
    const [a, b] = (await load(env(text))).registry.workdirs;
    expect([a!.cross_mounts, a!.refuse_hardlinked_reads]).toEqual([false, true]);
    expect([b!.cross_mounts, b!.refuse_hardlinked_reads]).toEqual([true, false]);
  });

  for (const key of ["WORKDIR_01_CROSS_MOUNTS", "WORKDIR_01_REFUSE_HARDLINKED_READS", "SERVERFS_CROSS_MOUNTS", "SERVERFS_REFUSE_HARDLINKED_READS"]) {
    test(`${key}=perhaps is refused, naming the key`, async () => {
      await expectProblem(env(`${SLOT1}${key}=perhaps\n`), key, "expected true or false");
    });
  }
});

test("render-config shows both keys, identically from TOML and .env", () => {
  const a = runCli(["render-config", "--config", writeTemp(wd("a", "/srv/a", "cross_mounts = false\nrefuse_hardlinked_reads = true\n"), "e.toml")]);
  const b = runCli(["render-config", "--env-file", writeTemp(`${SLOT1}WORKDIR_01_CROSS_MOUNTS=false\nWORKDIR_01_REFUSE_HARDLINKED_READS=true\n`, "e.env")]);
  expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, "", ""]);
  expect(b.stdout).toBe(a.stdout);
  const w = JSON.parse(a.stdout).workdirs[0];
  expect([w.cross_mounts, w.refuse_hardlinked_reads]).toEqual([false, true]);
});

test("serve --workdir (zero config) gets the defaults", async () => {
  const { registry } = await registryFromWorkdirArgs(["p=/srv/p:rw"], "/");
  expect([registry.workdirs[0]!.cross_mounts, registry.workdirs[0]!.refuse_hardlinked_reads]).toEqual([true, false]);
});
