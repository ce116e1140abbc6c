# Chooses the BLAS behind ember's GEMM and defines the interface target ember_blas.
#
# Debian 12's OpenBLAS 0.3.21 misdetects recent CPUs and runs its slowest
# kernels (see DESIGN.md), so AUTO prefers the current OpenBLAS that PyPI's
# scipy-openblas32 wheel ships (the one numpy uses), and falls back to the
# system CBLAS. core/cpu/blas.h maps one set of names onto either.
#
# Measured sgemm, row-major NN, 2 threads, medians (GFLOP/s), on 2 cores of an
# AMD EPYC (Zen 4, AVX-512), 2026-11-29, quiet machine:
#                                          n=512   n=2048
#   scipy-openblas32 0.3.34 ("SkylakeX")    196     204
#   Debian OpenBLAS 0.3.21 ("Cooperlake")   202     204
#   Debian 0.3.21, OPENBLAS_CORETYPE=SKYLAKEX 204   205
#   numpy 2.4.6 (own OpenBLAS 0.3.31)     200     198
# All equal here; on the Intel Xeons of DESIGN.md the Debian build detects
# "Prescott" (~32 GFLOP/s), so the current OpenBLAS stays the default.
add_library(ember_blas INTERFACE)
set(EMBER_BLAS_CHOSEN "")
if(EMBER_BLAS STREQUAL "AUTO" OR EMBER_BLAS STREQUAL "scipy-openblas")
  find_package(Python COMPONENTS Interpreter QUIET)
  if(Python_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python_EXECUTABLE} -c "import scipy_openblas32 as s; print(s.get_include_dir()); print(s.get_lib_dir()); print(s.get_library())"
      OUTPUT_VARIABLE _sob OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _sob_rc ERROR_QUIET)
    if(_sob_rc EQUAL 0)
      string(REPLACE "\n" ";" _sob "${_sob}")
      list(GET _sob 0 _sob_inc)
      list(GET _sob 1 _sob_lib)
      list(GET _sob 2 _sob_name)
      find_library(EMBER_SCIPY_OPENBLAS NAMES ${_sob_name} PATHS ${_sob_lib} NO_DEFAULT_PATH)
      if(EMBER_SCIPY_OPENBLAS)
        target_include_directories(ember_blas INTERFACE ${_sob_inc})
        target_link_libraries(ember_blas INTERFACE ${EMBER_SCIPY_OPENBLAS})
        target_compile_definitions(ember_blas INTERFACE EMBER_BLAS_SCIPY_OPENBLAS=1)
        set(EMBER_BLAS_LIBDIR ${_sob_lib})
        set(EMBER_BLAS_CHOSEN "scipy-openblas32 (${EMBER_SCIPY_OPENBLAS})")
      endif()
    endif()
  endif()
  if(EMBER_BLAS STREQUAL "scipy-openblas" AND NOT EMBER_BLAS_CHOSEN)
    message(FATAL_ERROR "EMBER_BLAS=scipy-openblas but `pip install scipy-openblas32` was not found")
  endif()
endif()
if(NOT EMBER_BLAS_CHOSEN)
  # OpenBLAS first (its thread count can be set); any CBLAS otherwise.
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  if(BLAS_FOUND)
    find_path(EMBER_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas-pthread openblas REQUIRED)
    target_compile_definitions(ember_blas INTERFACE EMBER_BLAS_OPENBLAS=1)
  else()
    unset(BLA_VENDOR)
    find_package(BLAS REQUIRED)
    find_path(EMBER_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas REQUIRED)
  endif()
  target_include_directories(ember_blas INTERFACE ${EMBER_CBLAS_INCLUDE})
  target_link_libraries(ember_blas INTERFACE ${BLAS_LIBRARIES})
  set(EMBER_BLAS_CHOSEN "system BLAS (${BLAS_LIBRARIES})")
endif()
message(STATUS "ember: BLAS = ${EMBER_BLAS_CHOSEN}")
