# Cross build for 64-bit Arm Linux (NEON) from an x86-64 Debian 12 machine: Debian's
# g++-aarch64-linux-gnu, the arm64 -dev packages installed beside the native ones (multiarch), and
# qemu-user to run the test binaries (CTest and gtest_discover_tests go through the emulator).
# Used by scripts/test-arm64.sh.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The second root is where pkg-config's arm64 files point (PCRE2, httplib): without it their
# libraries are not found under the ONLY mode below.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# The binaries load the multiarch arm64 libc from /lib (no -L): threads hang at creation
# under qemu 7.2 when the loader comes from the cross compiler's /usr/aarch64-linux-gnu.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
