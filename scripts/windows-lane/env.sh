# Shared settings for the Windows lane (sourced by install.sh and run.sh, never run directly).
# Everything the lane installs lives in one cache directory outside the repository, so the lane
# never touches the checkout's dependencies and a second run reuses the first one's work.
LANE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$LANE_DIR/../.." && pwd)"
LANE_CACHE="${SERVERFS_WINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/serverfs-wine}"
# The Windows Bun must be exactly the pinned Bun: the tests exercise the runtime we ship.
BUN_VERSION="$(sed -n 's/^ *"bun": "\([0-9][0-9.]*\)",\{0,1\}$/\1/p' "$REPO_DIR/package.json" | head -1)"
BUN_EXE="$LANE_CACHE/bun-windows-x64-$BUN_VERSION/package/bin/bun.exe"
export WINEPREFIX="$LANE_CACHE/prefix"
export WINEARCH=win64
# Wine's own chatter (fixme:, err:) would drown the test output; failures still surface as exit codes.
export WINEDEBUG="${WINEDEBUG:--all}"
# No Mono/Gecko installer dialogs, no desktop integration: the prefix only runs console programs.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml,winemenubuilder.exe=}"

lane_wine() {
  # Debian's wine64 package ships only /usr/lib/wine/wine64; the `wine` package adds /usr/bin/wine.
  local candidate
  for candidate in /usr/lib/wine/wine64 "$(command -v wine64 2>/dev/null)" "$(command -v wine 2>/dev/null)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
