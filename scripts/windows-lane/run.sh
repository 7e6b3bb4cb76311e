#!/usr/bin/env bash
# Runs the Windows tests under Wine with the pinned Windows Bun (run install.sh first).
# Usage: run.sh [test files...]   (default: every test/windows-lane list entry, see below)
# Prints `windows-lane: N passed, N failed, N skipped` as its last line and exits non-zero when a
# test failed or the runner did not report.
set -uo pipefail
source "$(dirname "$0")/env.sh"
WINE="$(lane_wine)" || { echo "windows-lane: wine64 is not installed (run install.sh)" >&2; exit 1; }
[ -s "$BUN_EXE" ] || { echo "windows-lane: $BUN_EXE missing (run install.sh)" >&2; exit 1; }

cd "$REPO_DIR"
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  # The Windows tests: each is Windows-only (skips elsewhere) or runs on every OS.
  mapfile -t files < <(grep -v '^#' "$LANE_DIR/tests.txt" | sed '/^$/d')
fi

# The Bridge tests run the real Windows executable (built here in seconds with the pinned Linux
# Bun); SERVERFS_WINDOWS_EXE may name another one. Wine maps the Unix root to drive Z:.
if [ -z "${SERVERFS_WINDOWS_EXE:-}" ]; then
  ./node_modules/.bin/bun build/compile.ts windows-x64 >/dev/null || { echo "windows-lane: building the Windows executable failed" >&2; exit 1; }
  export SERVERFS_WINDOWS_EXE="Z:${REPO_DIR//\//\\}\\dist\\serverfs-windows-x64.exe"
fi

log="$(mktemp)"
trap 'rm -f "$log" "$log.raw"' EXIT
# A Linux pipe on a Wine process's stdin reads as EOF to Windows Bun, so stdin is /dev/null and
# anything that needs a live stdin is driven from inside bun.exe (the tests spawn Windows children).
# Output goes to a file, not a pipe: Wine's background services (services.exe, explorer.exe, started
# on first use of e.g. schtasks) inherit the descriptors and would hold a pipe open forever.
# --timeout as npm test passes it (Bun ignores a bunfig timeout).
"$WINE" "$BUN_EXE" test --timeout 30000 "${files[@]}" </dev/null >"$log.raw" 2>&1
status=$?
# Stops this prefix's wineserver and those services, so nothing of the lane outlives it.
"$(dirname "$WINE")/wineserver64" -k 2>/dev/null || "$(dirname "$WINE")/wineserver" -k 2>/dev/null || true
# Bun's "directory mismatch" notes are Wine's path case folding meeting Bun's fd cache: harmless.
tr -d '\r' <"$log.raw" | grep -v '^Internal error: directory mismatch' >"$log"
rm -f "$log.raw"
cat "$log"

count() { grep -Eo "^ *[0-9]+ $1\$" "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0; }
pass=$(count pass)
fail=$(count fail)
skip=$(count skip)
if [ "$status" -eq 0 ] && ! grep -Eq '^ *[0-9]+ pass$' "$log"; then
  echo "windows-lane: the test runner printed no summary" >&2
  status=1
fi
echo "windows-lane: ${pass} passed, ${fail} failed, ${skip} skipped"
exit "$status"
