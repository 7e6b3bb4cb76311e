// The one place that asks which OS we run on. Code that picks an implementation per OS calls
// select() (or selectFor() with an injected platform, as the service installers' tests do);
// code that only states a platform fact reads the constants. Values are taken once, at load.

export type OsKind = "linux" | "darwin" | "windows" | "other";

export function osKindOf(platform: NodeJS.Platform): OsKind {
  if (platform === "linux") return "linux";
  if (platform === "darwin") return "darwin";
  if (platform === "win32") return "windows";
  return "other";
}

/** Node's name for this platform, for messages ("not available on freebsd"). */
export const PLATFORM_NAME: NodeJS.Platform = process.platform;
export const OS: OsKind = osKindOf(PLATFORM_NAME);
export const IS_LINUX = OS === "linux";
export const IS_DARWIN = OS === "darwin";
export const IS_WINDOWS = OS === "windows";

/** One implementation per OS kind; `other` is used for any kind not listed. */
export type OsChoices<T> = Partial<Record<OsKind, () => T>> & { other: () => T };

/** Run the choice for `platform` (default: this OS). */
export function selectFor<T>(platform: NodeJS.Platform, choices: OsChoices<T>): T {
  const pick = choices[osKindOf(platform)] ?? choices.other;
  return pick();
}

/** Run the choice for this OS. */
export function select<T>(choices: OsChoices<T>): T {
  return selectFor(PLATFORM_NAME, choices);
}
