// Registry objects for the fs tests, their child-process fixtures and the fs benchmarks: the
// shared builder (no bun:test import: children run it too).
export { registry, workdir } from "../support/registry.ts";
