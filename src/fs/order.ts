// Code-point name order (kept with the platform's bounded directory readers, which select in it)
// and the caller-limit clamp.
export { compareNames, sortByName } from "../../platform/fs/name-order.ts";

/** Clamp a caller limit to [1, max], falling back to the published default. */
export function clampLimit(value: number | undefined | null, fallback: number, max: number): number {
  const v = value === undefined || value === null || !Number.isFinite(value) ? fallback : Math.floor(value);
  return Math.max(1, Math.min(v, max));
}
