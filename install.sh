#!/bin/sh
# Installs the serverfs executable for this machine from a GitHub release.
#
#   sh install.sh [--version X.Y.Z] [--prefix DIR] [--base-url URL]
#
# It downloads serverfs-<os>-<arch> and SHA256SUMS from the release, checks the executable's
# SHA-256 against SHA256SUMS, and only then makes it executable and moves it into
# DIR (default ~/.local/bin). Nothing downloaded is ever run by this script or a shell.
# --base-url is the directory that holds the release's files (default: the latest release, or
# the one --version names); it may be file:// or http(s)://.
set -eu

REPOSITORY="serverfs/serverfs"
prefix="${HOME}/.local/bin"
version=""
base_url=""

die() {
  printf 'serverfs install: %s\n' "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a version"; version="${2#v}"; shift 2 ;;
    --version=*) version="${1#--version=}"; version="${version#v}"; shift ;;
    --base-url) [ $# -ge 2 ] || die "--base-url needs a URL"; base_url="$2"; shift 2 ;;
    --base-url=*) base_url="${1#--base-url=}"; shift ;;
    -h|--help) sed -n '2,11p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

if [ -z "$base_url" ]; then
  if [ -n "$version" ]; then
    base_url="https://github.com/${REPOSITORY}/releases/download/v${version}"
  else
    base_url="https://github.com/${REPOSITORY}/releases/latest/download"
  fi
fi
base_url="${base_url%/}"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "no serverfs build for $(uname -s); on Windows use install.ps1" ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "no serverfs build for $(uname -m)" ;;
esac
# A Rosetta 2 shell on Apple silicon reports x86_64: prefer the native build.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
  arch=arm64
fi
asset="serverfs-${os}-${arch}"
case "$asset" in
  serverfs-linux-x64|serverfs-linux-arm64|serverfs-darwin-arm64|serverfs-darwin-x64) ;;
  *) die "no serverfs build for ${os}-${arch}" ;;
esac

if command -v curl >/dev/null 2>&1; then
  fetch() { curl --fail --silent --show-error --location --proto '=https,http,file' --output "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget --quiet --output-document="$2" "$1"; }
else
  die "needs curl or wget"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
elif command -v openssl >/dev/null 2>&1; then
  sha256() { openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1; }
else
  die "needs sha256sum, shasum or openssl to check the download"
fi

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t serverfs)"
trap 'rm -rf "$tmp"' EXIT INT TERM

printf 'serverfs install: downloading %s from %s\n' "$asset" "$base_url" >&2
fetch "${base_url}/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download ${base_url}/SHA256SUMS"
fetch "${base_url}/${asset}" "$tmp/${asset}" || die "could not download ${base_url}/${asset}"

expected="$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")"
[ -n "$expected" ] || die "SHA256SUMS has no line for ${asset}"
actual="$(sha256 "$tmp/${asset}")"
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for ${asset}: SHA256SUMS says ${expected}, the download is ${actual}; nothing was installed"
fi

mkdir -p "$prefix" || die "cannot create ${prefix}"
chmod 755 "$tmp/${asset}"
# Into the target directory under a temporary name first, then renamed: a running serverfs keeps
# its old file, and no half-written serverfs is ever visible.
staged="${prefix}/.serverfs.$$"
cp "$tmp/${asset}" "$staged" || die "cannot write into ${prefix}"
mv -f "$staged" "${prefix}/serverfs" || { rm -f "$staged"; die "cannot write ${prefix}/serverfs"; }
printf 'serverfs install: installed %s\n' "${prefix}/serverfs" >&2

case ":${PATH}:" in
  *":${prefix}:"*) ;;
  *)
    printf 'serverfs install: %s is not on your PATH; add it, e.g.\n' "$prefix" >&2
    printf '  echo '\''export PATH="%s:$PATH"'\'' >> ~/.profile   # then open a new shell\n' "$prefix" >&2
    ;;
esac
