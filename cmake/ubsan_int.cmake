# -DEMBER_UBSAN_INT=ON: the tensor core (core/, its front-ends and CPU
# kernels), the shared integer formulas the CUDA formulas use too
# (core/int_math.h, through the elementwise emulation test) and the gloo
# reductions run under -fsanitize=signed-integer-overflow, which aborts on the
# first signed overflow: undefined behaviour that the kernels avoid by wrapping
# in unsigned types, and the front-ends by checked or 128-bit size arithmetic.
# Only these sources are instrumented (the rest come from ccache as in any
# build), so a separate build directory is cheap:
#   cmake -S . -B build/ubsan -G Ninja -DEMBER_CUDA=OFF -DEMBER_UBSAN_INT=ON
#   ninja -C build/ubsan ember_tests && build/ubsan/ember_tests "[int-overflow],[emulation]"
# Its _C runs the Python tests too (a copy of python/ember with _C linked to
# build/ubsan's). For the whole project, configure a build with
# -DCMAKE_CXX_FLAGS="-fsanitize=signed-integer-overflow
# -fno-sanitize-recover=signed-integer-overflow" and the same -fsanitize in
# CMAKE_{SHARED,MODULE,EXE}_LINKER_FLAGS (about 20 minutes on 2 cores).
option(EMBER_UBSAN_INT "Build the CPU kernels with -fsanitize=signed-integer-overflow" OFF)
if(NOT EMBER_UBSAN_INT)
  return()
endif()
set(EMBER_UBSAN_INT_FLAGS -fsanitize=signed-integer-overflow -fno-sanitize-recover=signed-integer-overflow)
file(GLOB EMBER_UBSAN_INT_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/core/*.cpp
  ${CMAKE_SOURCE_DIR}/core/ops/*.cpp
  ${CMAKE_SOURCE_DIR}/core/cpu/*.cpp
  ${CMAKE_SOURCE_DIR}/distributed/gloo/*.cpp
  ${CMAKE_SOURCE_DIR}/tests/cpp/test_int_overflow.cpp
  ${CMAKE_SOURCE_DIR}/tests/cpp/test_elementwise_emulation.cpp)
set_source_files_properties(${EMBER_UBSAN_INT_SOURCES} PROPERTIES COMPILE_OPTIONS "${EMBER_UBSAN_INT_FLAGS}")
# The runtime comes with libember, so ember_tests and the Python extension link it too.
target_link_options(ember PUBLIC -fsanitize=signed-integer-overflow)
