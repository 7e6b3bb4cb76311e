// Host-path containment lives in the platform layer (platform/paths.ts), which needs it for its
// own OS probes and cannot import src/; src/ uses the same single implementation from here.
export { isWithin } from "../../platform/paths.ts";
