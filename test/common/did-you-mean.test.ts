// The one "did you mean" rule shared by the command line and the configuration loaders.
import { describe, expect, test } from "bun:test";
import { closestName, didYouMean, didYouMeanKey } from "../../src/common/did-you-mean.ts";

describe("closestName", () => {
  test("the single closest name within the edits a name of that length allows, without case", () => {
    expect(closestName("serv", ["serve", "service", "doctor"])).toBe("serve");
    expect(closestName("runing", ["queued", "running", "succeeded"])).toBe("running");
    expect(closestName("readonly", ["read_only", "agent_mode"])).toBe("read_only");
    expect(closestName("READ_ONY", ["read_only"])).toBe("read_only");
    expect(closestName("WORKDIR_01_READONLY", ["WORKDIR_01_READ_ONLY", "WORKDIR_01_PATH"])).toBe("WORKDIR_01_READ_ONLY");
    expect(closestName("stauts", ["status"])).toBe("status"); // a swap of neighbours is one edit
  });
  test("a tie, nothing close, or the name itself suggests nothing", () => {
    expect(closestName("ab", ["ac", "ad"])).toBeNull();
    expect(closestName("zzzz", ["serve", "doctor"])).toBeNull();
    expect(closestName("serve", ["serve"])).toBeNull();
    expect(closestName("", ["serve"])).toBeNull();
  });
  test("with nothing close, a name the typed text uniquely starts counts", () => {
    expect(closestName("rend", ["render-config", "doctor"])).toBe("render-config");
    expect(closestName("s", ["serve", "service"])).toBeNull();
  });
});

describe("phrasing", () => {
  test("command line and configuration", () => {
    expect(didYouMean("serv", ["serve"])).toBe("; did you mean 'serve'?");
    expect(didYouMean("limt", ["limit"], (n) => `--${n}`)).toBe("; did you mean '--limit'?");
    expect(didYouMean("zzzz", ["serve"])).toBe("");
    expect(didYouMeanKey("readonly", ["read_only"])).toBe(" (did you mean 'read_only'?)");
    expect(didYouMeanKey("zzzz", ["read_only"])).toBe("");
  });
});
