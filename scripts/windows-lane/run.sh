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

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# A Linux pipe on a Wine process's stdin reads as EOF to Windows Bun, so stdin is /dev/null and
# anything that needs a live stdin is driven from inside bun.exe (the tests spawn Windows children).
"$WINE" "$BUN_EXE" test "${files[@]}" </dev/null 2>&1 | tr -d '\r' | tee "$log"
status=${PIPESTATUS[0]}
"$(dirname "$WINE")/wineserver64" -k 2>/dev/null || true

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
