# examples/firmware/firmware.mk - the bare-metal Cortex-M build of the firmware proof
# (included by the top-level Makefile).
#
#   make firmware       build build/firmware/firmware.elf with arm-none-eabi-gcc
#                       (newlib-nano), prove that no heap/stdio is linked, print sizes
#   make firmware-run   run it in qemu-system-arm (mps2-an386, semihosting, -icount)
#                       under a time limit and check what it printed
#   make firmware-riscv compile the headers with riscv64-unknown-elf-gcc (+ picolibc)
#   make firmware-cross the same weights on a Cortex-M4F and a Cortex-M7 (fw_math.h)
#   make firmware-f16   the training image in float16: the bits of its reference loop, and
#                       less RAM than the float32 image by what the plans say
#
# Needs the Debian packages gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm.
# FW_BOARD=an386 (default): QEMU mps2-an386, Cortex-M4F, single-precision FPU, into
# build/firmware; FW_BOARD=an500: mps2-an500, Cortex-M7, double-precision FPU, into
# build/firmware-an500 (same memory map, same linker script).

FW_DIR    := examples/firmware
FW_BOARD  ?= an386
ifeq ($(FW_BOARD),an500)
FW_OUT    := build/firmware-an500
FW_CPU    := -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16
else
FW_OUT    := build/firmware
FW_CPU    := -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
endif
FW_CC     := arm-none-eabi-gcc
FW_INC    ?= -I.
FW_CFLAGS := $(CSTD) $(WARN) $(FW_CPU) -O2 -g -ffunction-sections -fdata-sections \
             $(FW_INC) -I$(FW_DIR) -I$(FW_OUT) $(FW_EXTRA)
FW_LDFLAGS := --specs=nano.specs -nostartfiles -T $(FW_DIR)/mps2.ld \
              -Wl,--gc-sections -Wl,-Map=$(FW_OUT)/firmware.map
# MNIST subset compiled into flash: first FW_TRAIN training images, first FW_TEST
# t10k images (held out), FW_POOL=2 averages 2x2 pixel blocks (28x28 -> 14x14).
FW_TRAIN  ?= 512
FW_TEST   ?= 500
FW_POOL   ?= 2
FW_QEMU   := qemu-system-arm -M mps2-$(FW_BOARD) -display none -monitor none -serial none \
             -semihosting-config enable=on,target=native -icount shift=0
FW_SRCS   := $(FW_DIR)/startup.c $(FW_DIR)/main.c
FW_DEPS   := $(FW_SRCS) $(wildcard $(FW_DIR)/*.h) $(FW_DIR)/mps2.ld $(LIBHDRS)

.PHONY: firmware firmware-run firmware-riscv firmware-cross fw-force

# the compiler flags and the data settings as files, so that changing FW_EXTRA,
# FW_BOARD, FW_TRAIN, FW_TEST or FW_POOL rebuilds what depends on them
$(FW_OUT)/cflags: fw-force
	@mkdir -p $(@D)
	@echo '$(FW_CC) $(FW_CFLAGS)' | cmp -s - $@ || echo '$(FW_CC) $(FW_CFLAGS)' > $@
$(FW_OUT)/dataflags: fw-force
	@mkdir -p $(@D)
	@echo '$(FW_TRAIN) $(FW_TEST) $(FW_POOL)' | cmp -s - $@ || echo '$(FW_TRAIN) $(FW_TEST) $(FW_POOL)' > $@

$(FW_OUT)/gen_mnist: $(FW_DIR)/gen_mnist.c examples/mnist/mnist_data.h examples/common/ex_files.h $(LIBHDRS)
	@mkdir -p $(@D)
	$(CC_gcc) $(CSTD) $(WARN) -O2 -I. -Iexamples/common -Iexamples/mnist $< -o $@

# The generated data (never committed): depends on `make data` having fetched MNIST.
$(FW_OUT)/fw_mnist.c: $(FW_OUT)/gen_mnist $(FW_OUT)/dataflags | data
	$(FW_OUT)/gen_mnist data/mnist $(FW_TRAIN) $(FW_TEST) $(FW_POOL) $(FW_OUT)/fw_mnist
$(FW_OUT)/fw_mnist.h: $(FW_OUT)/fw_mnist.c

# Pool sizes as array bounds: build/ipupipe-plan (the host tool, examples/plan/plan_tool.h) on
# fw_model.h's configuration (fw_config: this model text, split before dense32, grouped,
# B=8, M=4, SGD) writes fw_pools.h (IPUP_PLAN_IPU0_BYTES, ...) in this build; the
# firmware re-plans at boot and stops with the exact figure should the two differ.
FW_PLAN_FLAGS := --model dense64,relu,dense32,relu,dense10,xent --splits dense32 --schedule grouped \
                 --batch-size 8 --batches-to-accumulate 4 --repeat-count 1 --optimizer sgd --runner coop \
                 $(FW_PLAN_EXTRA)
$(FW_OUT)/fw_pools.h: build/ipupipe-plan $(FW_OUT)/fw_mnist.h
	build/ipupipe-plan $(FW_PLAN_FLAGS) \
	  --input 1x1x$$(sed -n 's/^#define FW_PIXELS \([0-9][0-9]*\).*/\1/p' $(FW_OUT)/fw_mnist.h) -o $@

$(FW_OUT)/firmware.elf: $(FW_DEPS) $(FW_OUT)/fw_mnist.c $(FW_OUT)/fw_mnist.h $(FW_OUT)/fw_pools.h $(FW_OUT)/cflags
	$(FW_CC) $(FW_CFLAGS) $(FW_SRCS) $(FW_OUT)/fw_mnist.c $(FW_LDFLAGS) -lm -o $@

$(FW_OUT)/test_fw_math: $(FW_DIR)/test_fw_math.c $(FW_DIR)/fw_math.h
	@mkdir -p $(@D)
	$(CC_gcc) $(CSTD) $(WARN) -O2 -I$(FW_DIR) $< -o $@ -lm

firmware: $(FW_OUT)/firmware.elf $(FW_OUT)/test_fw_math $(FW_DIR)/nolibc.c
	@$(FW_OUT)/test_fw_math
	@$(FW_DIR)/check_nolibc.sh $(FW_OUT) $(FW_CC) $(FW_CPU)
	@if command -v clang >/dev/null; then $(FW_DIR)/check_nolibc.sh $(FW_OUT) clang \
	  --target=thumbv7em-none-eabihf $(filter-out -mthumb,$(FW_CPU)); fi
	@$(FW_DIR)/check_link.sh $(FW_OUT)/firmware.elf $(FW_OUT)/firmware.map

# the three headers compiled freestanding with riscv64-unknown-elf-gcc: with no libc header
# at all, and with picolibc's (each part skipped with a note when its Debian package is
# not installed; not part of CI: picolibc for RISC-V is ~1 GB)
firmware-riscv:
	@$(FW_DIR)/check_riscv.sh

firmware-run: firmware
	@$(FW_DIR)/run.sh $(FW_OUT)/firmware.elf $(FW_QEMU)

# Half precision on the device: the training image with cfg.dtype float16 (FW_DTYPE=1, the
# pools planned with --dtype float16: binary16 weights, activations, stashes and rings) in
# build/firmware-f16 must pass firmware-run's checks (its reference loop rounds as the
# emulator does, so the bits still match) and need less RAM (.data + .bss) than the float32
# image by exactly the difference of the two plans' pools.
FW16_OUT := build/firmware-f16
.PHONY: firmware-f16
firmware-f16: firmware
	@$(MAKE) --no-print-directory $(FW16_OUT)/firmware.elf FW_OUT=$(FW16_OUT) \
	  FW_EXTRA=-DFW_DTYPE=1 FW_PLAN_EXTRA="--dtype float16"
	@$(FW_DIR)/run.sh $(FW16_OUT)/firmware.elf $(FW_QEMU)
	@$(FW_DIR)/check_f16_ram.sh $(FW_OUT) $(FW16_OUT)

# The same weights on two different cores: the Cortex-M4F (single-precision FPU, newlib's
# fdlibm expf) and the Cortex-M7 (double-precision FPU, newlib's optimized-routines expf)
# train to different last bits with the C library's expf/logf; with fw_math.h's, plugged
# in through IPUPIPE_EXPF / IPUPIPE_LOGF, the final weights must hash the same.
firmware-cross:
	@mkdir -p build; for b in an386 an500; do \
	  $(MAKE) --no-print-directory firmware-run FW_BOARD=$$b FW_EXTRA=-DFW_OWN_MATH \
	    FW_OUT=build/firmware-ownmath-$$b > build/firmware-cross-$$b.log 2>&1 \
	  || { echo "FAIL firmware-cross: the $$b run failed (log: build/firmware-cross-$$b.log)"; tail -5 build/firmware-cross-$$b.log; exit 1; }; done
	@h1=$$(sed -n 's/^final weights FNV-1a \([0-9a-f]*\).*/\1/p' build/firmware-ownmath-an386/run.log); \
	 h2=$$(sed -n 's/^final weights FNV-1a \([0-9a-f]*\).*/\1/p' build/firmware-ownmath-an500/run.log); \
	 if [ -n "$$h1" ] && [ "$$h1" = "$$h2" ]; then \
	   echo "firmware-cross: Cortex-M4F (an386) and Cortex-M7 (an500) trained to the same weights: FNV-1a $$h1"; \
	 else echo "FAIL firmware-cross: final weights differ: an386 $$h1, an500 $$h2"; exit 1; fi

# ---- the inference-only image (infer.c): no emulator, only ipupipe_kernels.h and a model
# exported as C. gen_infer trains fw_model.h's network on the host on the same flash
# images (portable kernels, fw_math.h), writes fw_net.h through examples/common/export_c.h and
# ipup_predict's classes and output hash into infer_expect.txt; check_infer.sh runs the
# image in QEMU and wants those bits exactly.
#   make firmware-infer       build $(FW_OUT)/infer.elf, prove no heap/stdio, print sizes
#   make firmware-infer-run   run it and compare with the host (also part of firmware-run)
.PHONY: firmware-infer firmware-infer-run
FW_INFER_LDFLAGS := $(filter-out -Wl$(comma)-Map=%,$(FW_LDFLAGS)) -Wl,-Map=$(FW_OUT)/infer.map

$(FW_OUT)/gen_infer: $(FW_DIR)/gen_infer.c $(FW_DIR)/fw_model.h $(FW_DIR)/fw_math.h examples/common/export_c.h \
                     $(FW_OUT)/fw_mnist.c $(FW_OUT)/fw_mnist.h $(LIBHDRS)
	$(CC_gcc) $(CSTD) $(WARN) -O2 -DIPUPIPE_NO_SIMD -I. -Iexamples/common -I$(FW_DIR) -I$(FW_OUT) $< $(FW_OUT)/fw_mnist.c -o $@ -lm
$(FW_OUT)/fw_net.h: $(FW_OUT)/gen_infer
	$(FW_OUT)/gen_infer $@ $(FW_OUT)/infer_expect.txt
$(FW_OUT)/infer_expect.txt: $(FW_OUT)/fw_net.h

$(FW_OUT)/infer.elf: $(FW_DIR)/startup.c $(FW_DIR)/infer.c $(FW_DIR)/semihost.h $(FW_DIR)/mps2.ld ipupipe_kernels.h \
                     $(FW_OUT)/fw_net.h $(FW_OUT)/fw_mnist.c $(FW_OUT)/fw_mnist.h $(FW_OUT)/cflags
	$(FW_CC) $(FW_CFLAGS) $(FW_DIR)/startup.c $(FW_DIR)/infer.c $(FW_OUT)/fw_mnist.c $(FW_INFER_LDFLAGS) -lm -o $@

firmware-infer: $(FW_OUT)/infer.elf
	@$(FW_DIR)/check_link.sh $(FW_OUT)/infer.elf $(FW_OUT)/infer.map | grep -v '^firmware: flash'

firmware-infer-run: firmware-infer $(FW_OUT)/infer_expect.txt
	@$(FW_DIR)/check_infer.sh $(FW_OUT)/infer.elf $(FW_OUT)/infer_expect.txt $(FW_QEMU)

firmware-run: firmware-infer-run

# ---- The fine-tuning image (finetune.c): the sensor example's classifier with its
# pre-trained body frozen and only its head trained on the device. gen_finetune (a host
# program: portable kernels, fw_math.h's expf/logf) pre-trains on machine A, runs the same
# fine-tuning on the host and writes fw_finetune.c/.h (weights, machine B's data, pool
# sizes, the host's figures); run_finetune.sh checks what the image links, prints its
# text/data/bss, runs it in QEMU and checks its figures against the host's.
#   make firmware-finetune   build, check and run it (FW_BOARD as above)
.PHONY: firmware-finetune
FT_SRCS := $(FW_DIR)/startup.c $(FW_DIR)/finetune.c
FT_HDRS := $(FW_DIR)/ft_config.h $(FW_DIR)/fw_math.h $(FW_DIR)/semihost.h $(FW_DIR)/fw_print.h examples/common/sensor_classifier.h $(LIBHDRS)
FT_GEN_HDRS := $(FT_HDRS) examples/sensor/sensor_data.h examples/sensor/sensor_run.h examples/sensor/sensor_options.h examples/sensor/sensor_finetune.h
$(FW_OUT)/gen_finetune: $(FW_DIR)/gen_finetune.c $(FT_GEN_HDRS)
	@mkdir -p $(@D)
	$(CC_gcc) $(CSTD) $(WARN) -O2 -DIPUPIPE_NO_SIMD -I. -Iexamples/common -Iexamples/sensor -I$(FW_DIR) $< -o $@ -lm
$(FW_OUT)/fw_finetune.c: $(FW_OUT)/gen_finetune
	$(FW_OUT)/gen_finetune $(FW_OUT)/fw_finetune
$(FW_OUT)/fw_finetune.h: $(FW_OUT)/fw_finetune.c
$(FW_OUT)/finetune.elf: $(FT_SRCS) $(FT_HDRS) $(FW_DIR)/mps2.ld $(FW_OUT)/fw_finetune.c $(FW_OUT)/fw_finetune.h $(FW_OUT)/cflags
	$(FW_CC) $(FW_CFLAGS) -Iexamples/common $(FT_SRCS) $(FW_OUT)/fw_finetune.c $(subst firmware.map,finetune.map,$(FW_LDFLAGS)) -lm -o $@
firmware-finetune: $(FW_OUT)/finetune.elf
	@$(FW_DIR)/run_finetune.sh $(FW_OUT)/finetune.elf $(FW_QEMU)

# ---- The device program of docs/embedded.md ("A device that learns in the field"): the
# C block after `<!-- device.c -->`, taken out of docs/embedded.md as written by
# readme_extract.sh, which also runs the page's build/ipupipe-plan command into pools.h. The image is
# that text with readme_port.h force-included (semihosting output, IPUPIPE_NO_THREADS,
# IPUPIPE_ASSERT); the host build of the same text with the portable kernels
# (-DIPUPIPE_NO_SIMD) writes the output the image must print exactly; check_readme.sh
# checks what the image links, prints its sizes, runs it and compares.
#   make firmware-readme   build, check and run it (also part of firmware-run)
.PHONY: firmware-readme
FW_RD := $(FW_OUT)/readme
$(FW_RD)/device.c: docs/embedded.md $(FW_DIR)/readme_extract.sh build/ipupipe-plan
	@$(FW_DIR)/readme_extract.sh docs/embedded.md $(FW_RD) build/ipupipe-plan
$(FW_RD)/pools.h: $(FW_RD)/device.c
$(FW_RD)/device-host: $(FW_RD)/device.c $(FW_RD)/pools.h $(LIBHDRS)
	$(CC_gcc) $(CSTD) $(WARN) -O2 -DIPUPIPE_NO_SIMD -I. $< -o $@ $(LIBS)
$(FW_RD)/expect.txt: $(FW_RD)/device-host
	$< > $@
$(FW_RD)/device.elf: $(FW_DIR)/startup.c $(FW_RD)/device.c $(FW_RD)/pools.h $(FW_DIR)/readme_port.h $(FW_DIR)/semihost.h \
                     $(FW_DIR)/mps2.ld $(LIBHDRS) $(FW_OUT)/cflags
	$(FW_CC) $(FW_CFLAGS) -include $(FW_DIR)/readme_port.h $(FW_DIR)/startup.c $(FW_RD)/device.c \
	  $(filter-out -Wl$(comma)-Map=%,$(FW_LDFLAGS)) -Wl,-Map=$(FW_RD)/device.map -lm -o $@
firmware-readme: $(FW_RD)/device.elf $(FW_RD)/expect.txt
	@$(FW_DIR)/check_readme.sh $(FW_RD)/device.elf $(FW_RD)/expect.txt $(FW_QEMU)

firmware-run: firmware-readme

# ==== RISC-V: the training firmware on qemu-system-riscv32 -M virt ====
# main.c with the RISC-V platform layer (examples/firmware/riscv/: crt0.S, riscv_startup.c,
# virt.ld, riscv_semihost.h, riscv_platform.h), rv32imafc/ilp32f, picolibc, fw_math.h's
# expf/logf; the data and pool sizes of the Cortex-M build ($(FW_OUT)/fw_mnist.c,
# fw_pools.h: host tools' output, the same for every core). The reference is main.c built
# for the host with the portable kernels (-DIPUPIPE_NO_SIMD, no -march) and fw_math.h
# (host_platform.h): run_riscv.sh wants its final weights hash, step losses and accuracy.
#   make firmware-riscv-run   build, check what is linked, run in QEMU, compare with the host
# Needs the Debian packages gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
# qemu-system-misc (.ci/deps.sh firmware).
.PHONY: firmware-riscv-run rv-tools
RV_DIR     := $(FW_DIR)/riscv
RV_OUT     := build/firmware-riscv
RV_CC      := riscv64-unknown-elf-gcc
RV_CPU     := -march=rv32imafc -mabi=ilp32f
RV_CFLAGS  := $(CSTD) $(WARN) $(RV_CPU) -O2 -g -ffunction-sections -fdata-sections -DFW_OWN_MATH \
              $(FW_INC) -I$(FW_DIR) -I$(RV_DIR) -I$(FW_OUT) $(RV_EXTRA)
RV_LDFLAGS := --specs=picolibc.specs -nostartfiles -T $(RV_DIR)/virt.ld -Wl,--gc-sections \
              -Wl,-Map=$(RV_OUT)/firmware.map
RV_HOST_CFLAGS := $(CSTD) $(WARN) -O2 -DIPUPIPE_NO_SIMD -DFW_OWN_MATH -DFW_HOST_PLATFORM \
                  -I. -I$(FW_DIR) -I$(FW_OUT) $(RV_EXTRA)
# -cpu rv32,d=false: rv32imafc (QEMU's rv32 without the D extension); -bios none: no OpenSBI,
# the image starts in machine mode at 0x80000000;
# -icount shift=0: minstret counts executed instructions (riscv_platform.h)
RV_QEMU    := qemu-system-riscv32 -M virt -cpu rv32,d=false -bios none -smp 1 -m 128M -display none \
              -monitor none -serial none -semihosting-config enable=on,target=native -icount shift=0
RV_SRCS    := $(RV_DIR)/crt0.S $(RV_DIR)/riscv_startup.c $(FW_DIR)/main.c
RV_DEPS    := $(RV_SRCS) $(wildcard $(RV_DIR)/*.h) $(RV_DIR)/virt.ld $(wildcard $(FW_DIR)/*.h) $(LIBHDRS) \
              $(FW_OUT)/fw_mnist.c $(FW_OUT)/fw_mnist.h $(FW_OUT)/fw_pools.h

rv-tools:
	@for t in $(RV_CC):gcc-riscv64-unknown-elf qemu-system-riscv32:qemu-system-misc; do \
	  command -v $${t%%:*} >/dev/null || { echo "firmware-riscv-run: $${t%%:*} not found: apt-get install $${t#*:} (or .ci/deps.sh firmware)"; exit 1; }; done
	@[ -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] || \
	  { echo "firmware-riscv-run: picolibc not found: apt-get install picolibc-riscv64-unknown-elf (or .ci/deps.sh firmware)"; exit 1; }
$(RV_OUT)/cflags: fw-force
	@mkdir -p $(@D)
	@echo '$(RV_CC) $(RV_CFLAGS)' | cmp -s - $@ || echo '$(RV_CC) $(RV_CFLAGS)' > $@
$(RV_OUT)/firmware.elf: $(RV_DEPS) $(RV_OUT)/cflags | rv-tools
	$(RV_CC) $(RV_CFLAGS) $(RV_SRCS) $(FW_OUT)/fw_mnist.c $(RV_LDFLAGS) -o $@
$(RV_OUT)/firmware-host: $(FW_DIR)/main.c $(wildcard $(FW_DIR)/*.h) $(LIBHDRS) $(FW_OUT)/fw_mnist.c \
                         $(FW_OUT)/fw_mnist.h $(FW_OUT)/fw_pools.h $(RV_OUT)/cflags
	$(CC_gcc) $(RV_HOST_CFLAGS) $(FW_DIR)/main.c $(FW_OUT)/fw_mnist.c -o $@ -lm
firmware-riscv-run: $(RV_OUT)/firmware.elf $(RV_OUT)/firmware-host
	@FW_BINUTILS=riscv64-unknown-elf- $(FW_DIR)/check_link.sh $(RV_OUT)/firmware.elf $(RV_OUT)/firmware.map
	@$(RV_DIR)/run_riscv.sh $(RV_OUT)/firmware.elf $(RV_OUT)/firmware-host $(RV_QEMU)
# ==== end of the RISC-V block ====
# ---- Two cores, two stages (examples/firmware/dual/): the trainer with stage 0 on core 0
# and stage 1 on core 1 of an SSE-200 (two Cortex-M33 sharing SRAM) in QEMU's musca-b1, no
# OS: the library's device runner (ipup_set_devices, ipup_run_device), C11 atomics, WFE/SEV.
# musca-b1, not mps2-an521: on the an521 (and mps3-an524) QEMU 7.2 gives CPU0 no FPU, as
# the real SSE-200 configuration there (docs/embedded.md, "Two cores, two stages").
# musca-b1 has exactly 2 CPUs (no -smp); -icount runs them round-robin on one host thread.
# It uses the default board's generated data and plan ($(FW_OUT): fw_mnist.c, fw_pools.h)
# and compares its final weights with $(FW_OUT)/run.log's when firmware-run wrote one.
#   make firmware-dual       build $(FWD_OUT)/firmware-dual.elf
#   make firmware-dual-run   run it: both cores, then core 0 alone; the same bits
.PHONY: firmware-dual firmware-dual-run
FWD_OUT  := build/firmware-dual
FWD_CPU  := -mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16
FWD_QEMU := qemu-system-arm -M musca-b1 -display none -monitor none -serial none \
            -semihosting-config enable=on,target=native -icount shift=0
FWD_SRCS := $(FW_DIR)/startup.c $(FW_DIR)/dual/dual_core1.c $(FW_DIR)/main.c
$(FWD_OUT)/firmware-dual.elf: $(FWD_SRCS) $(FW_DIR)/dual/musca_b1.ld $(wildcard $(FW_DIR)/*.h $(FW_DIR)/dual/*.h) \
                              $(LIBHDRS) $(FW_OUT)/fw_mnist.c $(FW_OUT)/fw_mnist.h $(FW_OUT)/fw_pools.h
	@mkdir -p $(@D)
	$(FW_CC) $(CSTD) $(WARN) $(FWD_CPU) -O2 -g -ffunction-sections -fdata-sections $(FW_INC) -I$(FW_DIR) \
	  -I$(FW_OUT) -DFW_DUAL $(FW_EXTRA) $(FWD_SRCS) $(FW_OUT)/fw_mnist.c --specs=nano.specs -nostartfiles \
	  -T $(FW_DIR)/dual/musca_b1.ld -Wl,--gc-sections -Wl,-Map=$(FWD_OUT)/firmware-dual.map -lm -o $@
firmware-dual: $(FWD_OUT)/firmware-dual.elf
firmware-dual-run: firmware-dual
	@$(FW_DIR)/dual/run_dual.sh $(FWD_OUT)/firmware-dual.elf $(FW_OUT)/run.log $(FWD_QEMU)
# ---- Cortex-M speed (bench.c): instructions per multiply-accumulate of each dense and conv
# kernel at the firmware's shapes, and per training step of its MLP, the portable kernels
# against the register-blocked scalar path (IPUPIPE_SCALAR_BLOCKED, chosen for this core),
# in one image, built -O2 and -Os, on the Cortex-M4F (mps2-an386) under -icount shift=0:
# INSTRUCTIONS, not cycles. No MNIST data needed; the outputs of both paths are compared
# bit for bit on the device. `make bench` runs it when the cross tools exist.
#   make firmware-bench   build and run both images, print build/firmware-bench/*.log
.PHONY: firmware-bench
FWB_OUT   := build/firmware-bench
FWB_CPU   := -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
FWB_QEMU  := qemu-system-arm -M mps2-an386 -display none -monitor none -serial none \
             -semihosting-config enable=on,target=native -icount shift=0
$(FWB_OUT)/bench-%.elf: $(FW_DIR)/bench.c $(FW_DIR)/startup.c $(FW_DIR)/semihost.h \
                        $(FW_DIR)/fw_print.h $(FW_DIR)/mps2.ld $(LIBHDRS)
	@mkdir -p $(@D)
	$(FW_CC) $(CSTD) $(WARN) $(FWB_CPU) -$* -g -ffunction-sections -fdata-sections -I. -I$(FW_DIR) \
	  $(FW_DIR)/startup.c $(FW_DIR)/bench.c --specs=nano.specs -nostartfiles -T $(FW_DIR)/mps2.ld \
	  -Wl,--gc-sections -lm -o $@
firmware-bench: $(FWB_OUT)/bench-O2.elf $(FWB_OUT)/bench-Os.elf
	@for o in O2 Os; do \
	  log=$(FWB_OUT)/bench-$$o.log; \
	  timeout 300 $(FWB_QEMU) -kernel $(FWB_OUT)/bench-$$o.elf </dev/null > $$log 2>&1; \
	  rc=$$?; cat $$log; \
	  if [ $$rc -ne 0 ] || ! grep -q '^BENCH OK' $$log; then \
	    echo "FAIL firmware-bench: the -$$o image exited with status $$rc (log $$log)"; exit 1; fi; \
	done
# ---- The keyword-spotting image (kws.c): MLPerf Tiny's DS-CNN (kws_model.h) with its
# pre-trained body frozen (batch norm in inference mode) and its classifier dense12 trained
# on the device. gen_kws (a host program: portable kernels, fw_math.h's expf/logf)
# pre-trains DS-CNN briefly on synthetic keywords of speaker A, runs the device's
# fine-tuning on speaker B's samples and writes fw_kws.c/.h (weights by tensor name,
# speaker B's data, the host's figures); build/ipupipe-plan writes the pools of that
# pipeline (kws_pools.h, from `gen_kws --plan-args`), which gen_kws checks against its own
# plan; run_kws.sh checks what the image links, prints its sizes, runs it in QEMU and
# checks its figures against the host's.
#   make firmware-kws   build, check and run it (FW_BOARD as above)
.PHONY: firmware-kws
KWS_HDRS := $(FW_DIR)/kws_model.h $(FW_DIR)/fw_math.h $(FW_DIR)/semihost.h $(FW_DIR)/fw_print.h \
            $(FW_DIR)/mps2_platform.h $(LIBHDRS)
$(FW_OUT)/gen_kws: $(FW_DIR)/gen_kws.c $(KWS_HDRS) examples/common/mnist_texts.h
	@mkdir -p $(@D)
	$(CC_gcc) $(CSTD) $(WARN) -O2 -DIPUPIPE_NO_SIMD -I. -Iexamples/common -I$(FW_DIR) $< -o $@ -lm
$(FW_OUT)/kws_pools.h: build/ipupipe-plan $(FW_OUT)/gen_kws
	build/ipupipe-plan $$($(FW_OUT)/gen_kws --plan-args) -o $@
$(FW_OUT)/fw_kws.c: $(FW_OUT)/gen_kws $(FW_OUT)/kws_pools.h
	$(FW_OUT)/gen_kws $(FW_OUT)/kws_pools.h $(FW_OUT)/fw_kws
$(FW_OUT)/fw_kws.h: $(FW_OUT)/fw_kws.c
# RAM: mps2.ld's 256 KB budget is too small for DS-CNN's float32 weights (about 100 KB in
# IPU0's pool) beside two activation buffers of 25x5x64 floats; the image gets KWS_RAM of
# the board's 4 MiB at 0x20000000 instead (mps2.ld with that RAM length: kws.ld)
KWS_RAM ?= 384K
$(FW_OUT)/kws.ld: $(FW_DIR)/mps2.ld fw-force
	@mkdir -p $(@D)
	@sed 's/\(RAM .*LENGTH = \)256K/\1$(KWS_RAM)/' $< | cmp -s - $@ || \
	  sed 's/\(RAM .*LENGTH = \)256K/\1$(KWS_RAM)/' $< > $@
$(FW_OUT)/kws.elf: $(FW_DIR)/startup.c $(FW_DIR)/kws.c $(KWS_HDRS) $(FW_OUT)/kws.ld $(FW_OUT)/fw_kws.c \
                   $(FW_OUT)/fw_kws.h $(FW_OUT)/kws_pools.h $(FW_OUT)/cflags
	$(FW_CC) $(FW_CFLAGS) $(FW_DIR)/startup.c $(FW_DIR)/kws.c $(FW_OUT)/fw_kws.c \
	  $(subst $(FW_DIR)/mps2.ld,$(FW_OUT)/kws.ld,$(filter-out -Wl$(comma)-Map=%,$(FW_LDFLAGS))) \
	  -Wl,-Map=$(FW_OUT)/kws.map -lm -o $@
firmware-kws: $(FW_OUT)/kws.elf
	@$(FW_DIR)/run_kws.sh $(FW_OUT)/kws.elf $(FW_QEMU)
