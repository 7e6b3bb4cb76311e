#!/usr/bin/env bash
# The package lane: `build/package.ts` on the executables already in dist/ (building only those
# missing), then the tests that need its output (test/package/*.lane.ts): the npm tarballs
# installed offline and run through the launcher, the MCP Bundles unpacked and run. Prints
# `package-lane: N passed, N failed, N skipped`. Linux x64 only (the launcher test runs the
# linux-x64 executable). Also `npm run test:package`.
set -euo pipefail
cd "$(dirname "$0")/.."
bun=./node_modules/.bin/bun
targets=(linux-x64 darwin-arm64 darwin-x64 windows-x64)
missing=()
for t in "${targets[@]}"; do
  exe="dist/serverfs-$t"
  [ "$t" = windows-x64 ] && exe="$exe.exe"
  [ -e "$exe" ] || missing+=("$t")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "package-lane: building ${missing[*]}"
  "$bun" build/compile.ts "${missing[@]}"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bun" build/package.ts --binaries dist --targets "$(IFS=,; echo "${targets[*]}")" --out "$out"
log=$(mktemp)
status=0
SERVERFS_TEST_PACKAGE_DIR="$out" "$bun" test --timeout 300000 ./test/package/npm-package.lane.ts ./test/package/bundle.lane.ts >"$log" 2>&1 || status=$?
grep -E '^\((fail|skip)\)|^error:' "$log" || true
count() { grep -Eo "^ *[0-9]+ $1\$" "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0; }
passed=$(count pass)
failed=$(count fail)
skipped=$(count skip)
[ "$passed" -gt 0 ] || { status=1; tail -20 "$log"; }
echo "package-lane: $passed passed, $failed failed, $skipped skipped"
exit "$status"
