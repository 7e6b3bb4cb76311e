// The compile flags the executables depend on (docs/maintainers/build.md): the start-up JIT
// policy is baked in, and the pinned Bun has the switch every long-lived thread turns back with
// (platform/jit-policy.ts); a Bun without it would leave serve, the search thread and the Bridge
// unoptimized for their whole life, and nothing else would say so.
import { expect, test } from "bun:test";
import { compileArgs } from "../../build/compile.ts";
import { STARTUP_JIT_POLICY } from "../../platform/jit-policy.ts";

test("every target is compiled with the start-up JIT policy, above the engine's normal 1", () => {
  for (const target of ["linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64", "windows-x64"] as const) {
    expect(compileArgs(target, "/tmp/out")).toContain(`--compile-jit-policy=${STARTUP_JIT_POLICY}`);
  }
  expect(STARTUP_JIT_POLICY).toBeGreaterThan(1);
});

test("the pinned Bun can set a thread's JIT policy back to normal, and refuses a scale below 1", () => {
  expect(typeof Bun.unsafe.setJITPolicy).toBe("function");
  Bun.unsafe.setJITPolicy(1);
  expect(() => Bun.unsafe.setJITPolicy(0.5)).toThrow(RangeError);
});
