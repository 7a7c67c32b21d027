#!/usr/bin/env bash
# tests/test_packages.sh - the packages an embedded developer installs (docs/embedded.md,
# "Install"), used the way a consumer uses them, from projects in a temporary directory:
#   1. every manifest says the version of the headers (IPUPIPE_VERSION_STRING of
#      ipupipe.h, the same in all four headers): library.json, library.properties, the
#      CMake package's version file and ipupipe.pc (the Zephyr module has no version);
#   2. `make install DESTDIR=STAGE PREFIX=/usr` installs the headers, the CMake package and
#      ipupipe.pc, the same files as CMake's install(); the version file accepts 0.5 and
#      0.5.0 and refuses 0.4, 0.6 and 1.0 (before 1.0.0 a minor version may break the API);
#   3. a CMake project finds the staged install with find_package(ipupipe 0.5 CONFIG)
#      (CMAKE_PREFIX_PATH), compiles C and C++ against ipupipe::ipupipe, trains a step on
#      the threaded runner (the target links the threads library) and prints it;
#   4. a CMake project takes the source tree with add_subdirectory and IPUPIPE_NO_THREADS
#      ON: the target defines IPUPIPE_NO_THREADS, the program trains on the cooperative
#      runner;
#   5. a program built with `cc $(pkg-config --cflags --libs ipupipe)` (PKG_CONFIG_PATH and
#      PKG_CONFIG_SYSROOT_DIR to the staged install) trains a step;
#   6. the Arduino sketch examples/arduino/TrainOnDevice compiles as C++ for the Cortex-M4F
#      (arm-none-eabi-g++, hard float, the house warnings, -Werror) to an object with no
#      heap, stdio-free text and no pthread symbol; built for the host with the same stub
#      of Serial it trains and classifies held-out samples;
#   7. the Zephyr module: module.yml names zephyr/CMakeLists.txt and zephyr/Kconfig, which
#      defines every CONFIG_ symbol the CMake file reads; that file, run with Zephyr's
#      functions stubbed, puts the headers' directory on the include path;
#   8. `make uninstall` removes every installed file.
# Parts that need cmake, pkg-config or arm-none-eabi-g++ are skipped, with a line naming
# the package, when the tool is missing. About 30 s (five compiles of the implementation).
. "$(dirname "$0")/lib.sh"
make_tmp packages
root=$PWD
have() { command -v "$1" > /dev/null 2>&1; }
skip() { echo "skipped: $1"; }

# 1. versions
hver() { sed -n 's/^#define IPUPIPE_VERSION_STRING "\(.*\)"$/\1/p' "$1"; }
ver=$(hver ipupipe.h)
if [ -z "$ver" ]; then give_up "no '#define IPUPIPE_VERSION_STRING \"X.Y.Z\"' in ipupipe.h"; fi
for h in ipupipe_kernels.h ipupipe_sched.h; do
  if [ "$(hver $h)" = "$ver" ]; then ok "$h: IPUPIPE_VERSION_STRING $ver"
  else bad "$h: IPUPIPE_VERSION_STRING '$(hver $h)', ipupipe.h says $ver"; fi
done
for h in ipupipe.h ipupipe_kernels.h ipupipe_sched.h ipupipe_mpi.h; do
  if head -n 1 "$h" | grep -qF -- "- v$ver -"; then ok "$h: line 1 says v$ver"
  else bad "$h: line 1 does not say v$ver: $(head -n 1 "$h")"; fi
done
jver=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' library.json 2> "$tmp/json.err")
if [ "$jver" = "$ver" ]; then ok "library.json (PlatformIO): version $jver"
else bad "library.json: version '$jver', the headers say $ver" "$tmp/json.err"; fi
pver=$(sed -n 's/^version=//p' library.properties)
if [ "$pver" = "$ver" ]; then ok "library.properties (Arduino): version $pver"
else bad "library.properties: version '$pver', the headers say $ver"; fi
missing=""
for k in name version author maintainer sentence paragraph category architectures includes; do
  grep -q "^$k=." library.properties || missing+=" $k"
done
if [ -z "$missing" ]; then ok "library.properties has name, version, author, ..., includes"
else bad "library.properties lacks:$missing"; fi
# shellcheck disable=SC2016 # the glob is library.json's, expanded here
ex=$(python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["examples"]))' library.json)
# shellcheck disable=SC2086
if ls $ex > /dev/null 2>&1 && [ -f examples/arduino/TrainOnDevice/TrainOnDevice.ino ]; then
  ok "library.json's examples ($ex) match the Arduino sketch"
else bad "library.json's examples '$ex' match no sketch"; fi

# 2. make install, the same files as CMake's install()
stage=$tmp/stage
if make -s install DESTDIR="$stage" PREFIX=/usr > "$tmp/install.log" 2>&1; then
  ok "make install DESTDIR=\$tmp/stage PREFIX=/usr"
else give_up "make install failed" "$tmp/install.log"; fi
files="include/ipupipe.h include/ipupipe_kernels.h include/ipupipe_sched.h include/ipupipe_mpi.h
  share/cmake/ipupipe/ipupipeConfig.cmake share/cmake/ipupipe/ipupipeConfigVersion.cmake
  share/cmake/ipupipe/ipupipeTarget.cmake share/pkgconfig/ipupipe.pc"
absent=""
for f in $files; do [ -f "$stage/usr/$f" ] || absent+=" $f"; done
if [ -z "$absent" ]; then ok "installed: the 4 headers, the CMake package (3 files), ipupipe.pc"
else bad "make install did not install:$absent" "$tmp/install.log"; fi
if cmp -s ipupipe.h "$stage/usr/include/ipupipe.h"; then ok "the installed ipupipe.h is the tree's"
else bad "the installed ipupipe.h differs from the tree's"; fi
cver=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$stage/usr/share/cmake/ipupipe/ipupipeConfigVersion.cmake")
if [ "$cver" = "$ver" ]; then ok "CMake package version $cver"
else bad "ipupipeConfigVersion.cmake says '$cver', the headers $ver"; fi
has "ipupipe.pc: prefix=/usr" "prefix=/usr" "$stage/usr/share/pkgconfig/ipupipe.pc"

if ! have cmake; then
  skip "the CMake checks: no cmake (apt-get install cmake)"
else
  # CMake's install() of the tree, into another staging area: the same files
  if cmake -S . -B "$tmp/cm" -DCMAKE_INSTALL_PREFIX=/usr > "$tmp/cm.log" 2>&1 &&
     DESTDIR="$tmp/cmstage" cmake --install "$tmp/cm" >> "$tmp/cm.log" 2>&1; then
    if diff -r "$stage" "$tmp/cmstage" > "$tmp/diff.log" 2>&1; then
      ok "cmake --install writes the files of make install, byte for byte"
    else bad "cmake --install and make install differ" "$tmp/diff.log"; fi
  else bad "cmake -S . && cmake --install failed" "$tmp/cm.log"; fi
  # the version file's answers: VERSION:COMPATIBLE
  cat > "$tmp/ver.cmake" << EOF
foreach(req 0.5 $ver 0.4 0.6 1.0)
  string(REPLACE "." ";" parts "\${req}.0.0")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  set(PACKAGE_FIND_VERSION \${req})
  include("$stage/usr/share/cmake/ipupipe/ipupipeConfigVersion.cmake")
  message("\${req}:\${PACKAGE_VERSION_COMPATIBLE}")
endforeach()
EOF
  got=$(cmake -P "$tmp/ver.cmake" 2>&1 | tr '\n' ' ')
  want="0.5:TRUE $ver:TRUE 0.4:FALSE 0.6:FALSE 1.0:FALSE "
  if [ "$got" = "$want" ]; then ok "find_package versions: $got"
  else bad "find_package versions: got '$got', want '$want'"; fi
fi

# the consumer program: a tiny model on 2 emulated IPUs, one step; the threaded runner
# unless IPUPIPE_NO_THREADS (the CMake target may define it); with CONSUMER_CXX it also
# calls the library from a C++ file
mkdir -p "$tmp/src"
cat > "$tmp/src/consumer.c" << 'EOF'
#define IPUPIPE_IMPLEMENTATION
#include <ipupipe.h>
#include <stdio.h>

IPUP_ALIGN64 static uint8_t ipu0[16 << 10], ipu1[16 << 10], host[16 << 10];
static ipup_emu emu;

static int feed(void *user, const ipup_feed *f) {
    int32_t i, j;
    (void)user;
    for (i = 0; i < f->n; i++) {
        for (j = 0; j < 4; j++) f->x[i * 4 + j] = ipup_rng_uniform_f32(7, (uint64_t)(f->sample0 + i), (uint64_t)j);
        f->labels[i] = f->x[i * 4] > f->x[i * 4 + 1] ? 1 : 0;
    }
    return 0;
}
#ifdef CONSUMER_CXX
int cxx_layers(const char *text);
#endif

int main(void) {
    static ipup_model_desc m;
    static ipup_config c;
    ipup_run_stats st;
    m.in_h = 1; m.in_w = 1; m.in_c = 4;
    if (ipup_model_parse("dense8,relu,dense2,xent", &m, NULL, 0) != IPUP_OK) return 1;
    c.model = &m; c.stages = 2; c.microbatch = 4; c.microbatches = 2; c.repeat = 1;
    c.opt.kind = IPUP_OPT_SGD; c.opt.lr = 0.1f; c.infeed = feed;
#ifdef IPUPIPE_NO_THREADS
    c.runner = IPUP_RUNNER_COOP;
#else
    c.runner = IPUP_RUNNER_THREADS;
#endif
    c.ipu[0].mem = ipu0; c.ipu[0].bytes = sizeof ipu0;
    c.ipu[1].mem = ipu1; c.ipu[1].bytes = sizeof ipu1;
    c.host.mem = host;   c.host.bytes = sizeof host;
    if (ipup_init(&emu, &c) != IPUP_OK || ipup_run(&emu, &st) != IPUP_OK) {
        printf("%s\n", ipup_last_error(&emu));
        return 1;
    }
    printf("ipupipe %s, runner %s: step %lld, loss %.4f\n", IPUPIPE_VERSION_STRING,
           c.runner == IPUP_RUNNER_COOP ? "coop" : "threads", (long long)ipup_get_step(&emu),
           st.loss_mean);
#ifdef CONSUMER_CXX
    printf("from C++: %d layers\n", cxx_layers("dense8,relu,dense2,xent"));
#endif
    ipup_shutdown(&emu);
    return 0;
}
EOF
cat > "$tmp/src/layers.cpp" << 'EOF'
#include <ipupipe.h>
extern "C" int cxx_layers(const char *text);
int cxx_layers(const char *text) {
    static ipup_model_desc m;
    m.in_h = 1; m.in_w = 1; m.in_c = 4;
    return ipup_model_parse(text, &m, nullptr, 0) == IPUP_OK ? static_cast<int>(m.n_layers) : -1;
}
EOF
# trained LOG NAME RUNNER: the consumer's output says the version, the runner and step 1
trained() {
  if grep -qE "^ipupipe $ver, runner $3: step 1, loss [0-9]+\.[0-9]{4}$" "$1"; then
    ok "$2: trains a step on the $3 runner ($(head -n 1 "$1"))"
  else bad "$2: no 'ipupipe $ver, runner $3: step 1, loss ...' line" "$1"; fi
}

# what the target carries (on glibc 2.34 and later Threads::Threads adds no flag: the
# threads are in libc)
# shellcheck disable=SC2016 # CMake's variables
show='get_target_property(l ipupipe::ipupipe INTERFACE_LINK_LIBRARIES)
get_target_property(d ipupipe::ipupipe INTERFACE_COMPILE_DEFINITIONS)
if(NOT d)
  set(d "")
endif()
message(STATUS "ipupipe links [${l}] defines [${d}]")'
if have cmake; then
  # 3. find_package from the staged install
  mkdir -p "$tmp/fp"
  cat > "$tmp/fp/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.14)
project(consumer LANGUAGES C CXX)
find_package(ipupipe 0.5 CONFIG REQUIRED)
add_executable(consumer "$tmp/src/consumer.c" "$tmp/src/layers.cpp")
target_compile_definitions(consumer PRIVATE CONSUMER_CXX)
target_link_libraries(consumer PRIVATE ipupipe::ipupipe)
$show
EOF
  if (cd "$tmp/fp" && cmake -S . -B b -DCMAKE_PREFIX_PATH="$stage/usr" && cmake --build b) \
       > "$tmp/fp.log" 2>&1 && "$tmp/fp/b/consumer" > "$tmp/fp.out" 2>&1; then
    trained "$tmp/fp.out" "find_package(ipupipe 0.5 CONFIG) with CMAKE_PREFIX_PATH=\$stage/usr" threads
    has "find_package: the C++ file calls the library (4 layers)" "from C++: 4 layers" "$tmp/fp.out"
    has "find_package: the include path is the staged install's" "$stage/usr/include" \
      "$tmp/fp/b/CMakeFiles/consumer.dir/flags.make"
    has "find_package: ipupipe::ipupipe links libm and Threads::Threads, defines nothing" \
      "ipupipe links [m;Threads::Threads] defines []" "$tmp/fp.log"
  else bad "the find_package consumer did not build or run" "$tmp/fp.log" "$tmp/fp.out"; fi

  # 4. add_subdirectory of the source tree, the cooperative runner only
  mkdir -p "$tmp/as"
  cat > "$tmp/as/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.14)
project(consumer LANGUAGES C)
set(IPUPIPE_NO_THREADS ON)
add_subdirectory("$root" ipupipe)
add_executable(consumer "$tmp/src/consumer.c")
target_link_libraries(consumer PRIVATE ipupipe::ipupipe)
$show
EOF
  if (cd "$tmp/as" && cmake -S . -B b && cmake --build b) > "$tmp/as.log" 2>&1 &&
     "$tmp/as/b/consumer" > "$tmp/as.out" 2>&1; then
    trained "$tmp/as.out" "add_subdirectory with IPUPIPE_NO_THREADS ON" coop
    has "add_subdirectory: ipupipe::ipupipe links libm only, defines IPUPIPE_NO_THREADS" \
      "ipupipe links [m] defines [IPUPIPE_NO_THREADS=]" "$tmp/as.log"
  else bad "the add_subdirectory consumer did not build or run" "$tmp/as.log" "$tmp/as.out"; fi
fi

# 5. pkg-config
if ! have pkg-config; then
  skip "the pkg-config checks: no pkg-config (apt-get install pkgconf)"
else
  pc() { PKG_CONFIG_PATH=$stage/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage pkg-config "$@"; }
  mver=$(pc --modversion ipupipe 2> "$tmp/pc.err")
  if [ "$mver" = "$ver" ]; then ok "pkg-config --modversion ipupipe: $mver"
  else bad "pkg-config --modversion ipupipe: '$mver', the headers say $ver" "$tmp/pc.err"; fi
  flags=$(pc --cflags --libs ipupipe 2>> "$tmp/pc.err")
  flags=$(printf '%s' "$flags" | tr -s ' ' | sed 's/ $//')
  if [ "$flags" = "-I$stage/usr/include -lm -pthread" ]; then
    ok "pkg-config --cflags --libs ipupipe: -I\$stage/usr/include -lm -pthread"
  else bad "pkg-config --cflags --libs ipupipe: '$flags'" "$tmp/pc.err"; fi
  # shellcheck disable=SC2086 # the flags are words
  if (cd "$tmp" && cc -std=c11 src/consumer.c $flags -o pc-consumer) > "$tmp/pcb.log" 2>&1 &&
     "$tmp/pc-consumer" > "$tmp/pc.out" 2>&1; then
    trained "$tmp/pc.out" "cc \$(pkg-config --cflags --libs ipupipe)" threads
  else bad "the pkg-config consumer did not build or run" "$tmp/pcb.log" "$tmp/pc.out"; fi
fi

# 6. the Arduino sketch, with a stub of the one Arduino API it uses (Serial)
sketch=examples/arduino/TrainOnDevice/TrainOnDevice.ino
mkdir -p "$tmp/stub"
cat > "$tmp/stub/Arduino.h" << 'EOF'
#include <stdio.h>
struct stub_serial {
    void begin(unsigned long baud) { (void)baud; }
    void println(const char *s) { puts(s); }
};
inline stub_serial Serial;
EOF
echo 'void setup(); void loop(); int main() { setup(); loop(); return 0; }' > "$tmp/stub/main.cpp"
CXXWARN="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror"
if ! have arm-none-eabi-g++; then
  skip "the Cortex-M4F build of the sketch: no arm-none-eabi-g++ (apt-get install gcc-arm-none-eabi)"
else
  # shellcheck disable=SC2086
  if arm-none-eabi-g++ -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -std=gnu++17 \
       -fno-exceptions -fno-rtti -Os $CXXWARN -I. -include "$tmp/stub/Arduino.h" \
       -x c++ -c "$sketch" -o "$tmp/sketch.o" > "$tmp/arm.log" 2>&1; then
    ok "arm-none-eabi-g++ -mcpu=cortex-m4 -mfloat-abi=hard: $sketch compiles (-Werror)"
    arm-none-eabi-nm -C "$tmp/sketch.o" > "$tmp/arm.nm" 2>&1
    heap=$(grep -E ' U (malloc|calloc|realloc|free|_sbrk|pthread_[a-z_]*|printf|snprintf|vsnprintf)$' "$tmp/arm.nm" |
      tr '\n' ' ')
    if [ -z "$heap" ] && grep -q ' T setup()$' "$tmp/arm.nm"; then
      ok "the sketch's object defines setup and needs no heap, printf or pthread symbol"
    else bad "the sketch's object: setup missing or needs $heap" "$tmp/arm.nm"; fi
  else bad "arm-none-eabi-g++ could not compile $sketch" "$tmp/arm.log"; fi
fi
# shellcheck disable=SC2086
if g++ -std=c++17 -O1 $CXXWARN -I. -include "$tmp/stub/Arduino.h" -x c++ "$sketch" \
     -x none "$tmp/stub/main.cpp" -o "$tmp/sketch" -lm > "$tmp/sk.log" 2>&1 &&
   "$tmp/sketch" > "$tmp/sk.out" 2>&1; then
  right=$(sed -n 's/^held-out: \([0-9]*\) of 50 right$/\1/p' "$tmp/sk.out")
  first=$(sed -n 's/^step 25: loss \([0-9.]*\),.*/\1/p' "$tmp/sk.out")
  last=$(sed -n 's/^step 100: loss \([0-9.]*\),.*/\1/p' "$tmp/sk.out")
  if [ -n "$right" ] && [ "$right" -ge 40 ] && [ -n "$first" ] && [ -n "$last" ] &&
     awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a / 1.5) }'; then
    ok "the sketch on the host: loss $first at step 25, $last at step 100; held-out: $right of 50 right"
  else bad "the sketch on the host: the loss did not fall or too few held-out samples right" "$tmp/sk.out"; fi
else bad "the sketch did not build or run on the host (g++, stub Serial)" "$tmp/sk.log" "$tmp/sk.out"; fi

# 7. the Zephyr module
if grep -qx '  cmake: zephyr' zephyr/module.yml && grep -qx '  kconfig: zephyr/Kconfig' zephyr/module.yml &&
   [ -f zephyr/CMakeLists.txt ] && [ -f zephyr/Kconfig ]; then
  ok "zephyr/module.yml: cmake zephyr, kconfig zephyr/Kconfig (both present)"
else bad "zephyr/module.yml does not name zephyr/CMakeLists.txt and zephyr/Kconfig" zephyr/module.yml; fi
undef=""
while IFS= read -r s; do
  grep -q "^config ${s#CONFIG_}\$" zephyr/Kconfig || undef+=" $s"
done < <(grep -o 'CONFIG_[A-Z0-9_]*' zephyr/CMakeLists.txt | sort -u)
if [ -z "$undef" ]; then ok "zephyr/Kconfig defines every CONFIG_ symbol of zephyr/CMakeLists.txt"
else bad "zephyr/Kconfig lacks:$undef"; fi
if have cmake; then
  cat > "$tmp/zephyr.cmake" << EOF
function(zephyr_include_directories)
  message("include \${ARGN}")
endfunction()
function(zephyr_compile_definitions)
  message("define \${ARGN}")
endfunction()
set(CONFIG_IPUPIPE y)
set(CONFIG_IPUPIPE_NO_THREADS y)
include("$root/zephyr/CMakeLists.txt")
EOF
  cmake -P "$tmp/zephyr.cmake" > "$tmp/zephyr.out" 2>&1
  if [ "$(cat "$tmp/zephyr.out")" = "include $root"$'\n'"define IPUPIPE_NO_THREADS=" ]; then
    ok "zephyr/CMakeLists.txt with CONFIG_IPUPIPE: the headers' directory, IPUPIPE_NO_THREADS"
  else bad "zephyr/CMakeLists.txt with Zephyr's functions stubbed printed something else" "$tmp/zephyr.out"; fi
fi

# 8. make uninstall
if make -s uninstall DESTDIR="$stage" PREFIX=/usr > "$tmp/uninstall.log" 2>&1 &&
   [ -z "$(find "$stage" -type f)" ]; then
  ok "make uninstall removes every installed file"
else bad "make uninstall left files: $(find "$stage" -type f | tr '\n' ' ')" "$tmp/uninstall.log"; fi
finish
