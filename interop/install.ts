// Installs one agent package at its pinned version into a cache outside the repository, with npm
// only, and skips the install when that exact version is already there. The cache is keyed by
// package and version so two pins never share a tree.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function cacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache"), "serverfs-interop");
}

export function installDir(pkg: string, version: string): string {
  return path.join(cacheRoot(), `${pkg.replace("/", "+")}@${version}`);
}

/** The installed package's own version, or null when it is absent. */
export function installedVersion(dir: string, pkg: string): string | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, "node_modules", pkg, "package.json"), "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

export async function ensureInstalled(pkg: string, version: string, log: (s: string) => void): Promise<string> {
  const dir = installDir(pkg, version);
  if (installedVersion(dir, pkg) === version) return dir;
  fs.mkdirSync(dir, { recursive: true });
  log(`installing ${pkg}@${version} into ${dir}`);
  const proc = Bun.spawn(["npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--save-exact", `${pkg}@${version}`], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0 || installedVersion(dir, pkg) !== version) throw new Error(`npm install ${pkg}@${version} failed (exit ${code}): ${(err || out).slice(-800)}`);
  return dir;
}

/** Where `ensurePacked` unpacks a Windows package (its files are under `package/`). */
export const packedDir = (pkg: string, version: string) => path.join(cacheRoot(), "win32", `${pkg.replace("/", "+")}@${version}`);

/**
 * A win32 platform package unpacked as npm packs it (npm install refuses its `os` field on Linux;
 * `npm pack` fetches the same tarball with the registry's integrity check and installs nothing).
 */
export async function ensurePacked(pkg: string, version: string, log: (s: string) => void): Promise<string> {
  const dir = packedDir(pkg, version);
  try {
    if ((JSON.parse(fs.readFileSync(path.join(dir, "package", "package.json"), "utf8")) as { version?: string }).version === version) return dir;
  } catch {
    // not there yet
  }
  log(`fetching ${pkg}@${version} into ${dir}`);
  const tmp = `${dir}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const run = async (argv: string[]) => {
    const p = Bun.spawn(argv, { cwd: tmp, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`${argv.slice(0, 2).join(" ")} ${pkg}@${version} failed (exit ${code}): ${(err || out).slice(-800)}`);
    return out.trim();
  };
  const tarball = await run(["npm", "pack", "--silent", `${pkg}@${version}`]);
  await run(["tar", "-xzf", tarball]);
  fs.rmSync(path.join(tmp, tarball));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  return dir;
}

if (import.meta.main) {
  const [pkg, version] = process.argv.slice(2);
  if (!pkg || !version) throw new Error("usage: bun interop/install.ts <pkg> <version>");
  console.log(await ensureInstalled(pkg, version, console.log));
}
