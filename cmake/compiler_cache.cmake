# ccache for every build tree (Release, ASan+UBSan, Arm64 cross, fuzz, benchmarks) when the
# machine has it, through cmake/ccache-launcher.sh, which says how the cache is keyed. Without
# ccache, or with -DNANOSERVE_CCACHE=OFF, builds call the compiler directly.
option(NANOSERVE_CCACHE "Compile through ccache when it is installed" ON)
if(NANOSERVE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(NANOSERVE_CCACHE_PROGRAM ccache)
  if(NANOSERVE_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_SOURCE_DIR}/cmake/ccache-launcher.sh)
    set(CMAKE_C_COMPILER_LAUNCHER ${CMAKE_SOURCE_DIR}/cmake/ccache-launcher.sh)
  endif()
endif()
