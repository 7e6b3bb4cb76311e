#!/usr/bin/env bash
# Installs the Windows test lane: Wine and MinGW from Debian, the ProcessPrng shim built from
# shim/bcryptprimitives.c, the pinned Windows Bun from npm, and a fresh WINEPREFIX, all in the
# lane cache (see env.sh). Idempotent: each step is skipped when its result is already there.
set -euo pipefail
source "$(dirname "$0")/env.sh"

need_packages=()
[ -x /usr/lib/wine/wine64 ] || command -v wine64 >/dev/null 2>&1 || need_packages+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need_packages+=(gcc-mingw-w64-x86-64-win32)
if [ "${#need_packages[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "windows-lane: install ${need_packages[*]} (Debian packages) first" >&2
    exit 1
  fi
  echo "windows-lane: apt-get install ${need_packages[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_packages[@]}" >/dev/null
fi
WINE="$(lane_wine)"
mkdir -p "$LANE_CACHE"

# The shim: rebuilt whenever its source changes (the DLL's name carries the source's hash).
shim_src="$LANE_DIR/shim/bcryptprimitives.c"
shim_hash="$(sha256sum "$shim_src" | cut -c1-16)"
shim_dll="$LANE_CACHE/shim-$shim_hash/bcryptprimitives.dll"
if [ ! -s "$shim_dll" ]; then
  echo "windows-lane: building the ProcessPrng shim"
  mkdir -p "$(dirname "$shim_dll")"
  x86_64-w64-mingw32-gcc -O2 -shared -nostartfiles -e DllMain -o "$shim_dll.tmp" "$shim_src" -ladvapi32
  mv "$shim_dll.tmp" "$shim_dll"
fi

if [ -z "$BUN_VERSION" ]; then
  echo "windows-lane: cannot read the pinned bun version from package.json" >&2
  exit 1
fi
if [ ! -s "$BUN_EXE" ]; then
  echo "windows-lane: fetching @oven/bun-windows-x64@$BUN_VERSION"
  bun_dir="$(dirname "$(dirname "$(dirname "$BUN_EXE")")")"
  rm -rf "$bun_dir.tmp" && mkdir -p "$bun_dir.tmp"
  # npm pack fetches the tarball (with the registry's integrity check) without installing anything.
  tarball="$(cd "$bun_dir.tmp" && npm pack --silent "@oven/bun-windows-x64@$BUN_VERSION")"
  tar -xzf "$bun_dir.tmp/$tarball" -C "$bun_dir.tmp"
  rm -f "$bun_dir.tmp/$tarball"
  rm -rf "$bun_dir" && mv "$bun_dir.tmp" "$bun_dir"
fi

if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "windows-lane: initialising WINEPREFIX $WINEPREFIX"
  "$WINE" wineboot -i >/dev/null 2>&1 || true
  "$(dirname "$WINE")/wineserver64" -w 2>/dev/null || "$(dirname "$WINE")/wineserver" -w 2>/dev/null || true
  [ -f "$WINEPREFIX/system.reg" ] || { echo "windows-lane: wineboot did not create the prefix" >&2; exit 1; }
fi
# Wine 8.0 has no bcryptprimitives.dll of its own, so system32 is where every process finds ours.
install -m 0644 "$shim_dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

version="$("$WINE" "$BUN_EXE" --version 2>/dev/null | tr -d '\r')"
if [ "$version" != "$BUN_VERSION" ]; then
  echo "windows-lane: bun.exe under Wine answered '$version', expected $BUN_VERSION" >&2
  exit 1
fi
echo "windows-lane: ready (wine $("$WINE" --version), bun.exe $version, prefix $WINEPREFIX)"
