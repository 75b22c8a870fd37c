# Cross-compiling for 64-bit ARM Linux on a Debian amd64 host (scripts/build-arm64): Debian's
# aarch64-linux-gnu cross compilers (crossbuild-essential-arm64) and the project's libraries
# for arm64 installed through multiarch (dpkg --add-architecture arm64), so under /usr/lib/
# aarch64-linux-gnu and /usr/include/aarch64-linux-gnu rather than in a separate sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Libraries and headers for the target only; programs (pkg-config, python3) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The host's pkg-config, reading the arm64 .pc files only (Debian ships no aarch64 wrapper).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Test binaries run under user-mode QEMU (gtest_discover_tests runs them to list the tests).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
