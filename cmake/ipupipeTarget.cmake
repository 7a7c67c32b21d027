# ipupipeTarget.cmake - the one definition of ipupipe's CMake target, for both uses:
# the source tree's CMakeLists.txt (add_subdirectory) and the installed package
# (ipupipeConfig.cmake, find_package). Installed as is.
#
# _ipupipe_define_target(NAME INCLUDE_DIR [IMPORTED]) makes NAME an INTERFACE library:
#   - INCLUDE_DIR on the include path (ipupipe.h, ipupipe_kernels.h, ipupipe_sched.h,
#     ipupipe_mpi.h); C11 for C files (the headers also compile as C++);
#   - libm (the kernels call expf, logf, sqrtf), except on Windows;
#   - the threaded runner's threads library (Threads::Threads), unless IPUPIPE_NO_THREADS
#     is ON: then every file that uses the target is compiled with IPUPIPE_NO_THREADS
#     (no <pthread.h>, no <stdatomic.h>, the cooperative runner only) and nothing more
#     is linked. Not set: ON for a bare-metal toolchain (CMAKE_SYSTEM_NAME Generic),
#     OFF elsewhere. Set it before find_package or add_subdirectory.
# MPI is not linked: a program that includes ipupipe_mpi.h adds MPI::MPI_C itself.
function(_ipupipe_define_target name include_dir)
  if(NOT DEFINED IPUPIPE_NO_THREADS)
    if(CMAKE_SYSTEM_NAME STREQUAL "Generic")
      set(IPUPIPE_NO_THREADS ON)
    else()
      set(IPUPIPE_NO_THREADS OFF)
    endif()
  endif()
  if(ARGN STREQUAL "IMPORTED")
    add_library(${name} INTERFACE IMPORTED)
  else()
    add_library(${name} INTERFACE)
  endif()
  set(libs "")
  if(NOT WIN32)
    list(APPEND libs m)
  endif()
  if(IPUPIPE_NO_THREADS)
    # defined empty, so that a file's own "#define IPUPIPE_NO_THREADS" repeats it exactly
    set_property(TARGET ${name} PROPERTY INTERFACE_COMPILE_DEFINITIONS "IPUPIPE_NO_THREADS=")
  else()
    set(THREADS_PREFER_PTHREAD_FLAG ON)
    find_package(Threads REQUIRED)
    list(APPEND libs Threads::Threads)
  endif()
  if(ARGN STREQUAL "IMPORTED")
    set_property(TARGET ${name} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${include_dir}")
  else()
    set_property(TARGET ${name} PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                 "$<BUILD_INTERFACE:${include_dir}>")
  endif()
  set_property(TARGET ${name} PROPERTY INTERFACE_COMPILE_FEATURES c_std_11)
  set_property(TARGET ${name} PROPERTY INTERFACE_LINK_LIBRARIES "${libs}")
endfunction()
