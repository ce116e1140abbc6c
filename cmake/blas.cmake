# Chooses the BLAS behind ember's GEMM and defines the interface target ember_blas.
#
# Debian 12's OpenBLAS 0.3.21 misdetects recent CPUs and runs its slowest
# kernels (see DESIGN.md), so AUTO prefers the current OpenBLAS that PyPI's
# scipy-openblas32 wheel ships (the one numpy uses), and falls back to the
# system OpenBLAS, then to the copy inside numpy's wheel, then to any CBLAS.
# core/cpu/blas.h maps one set of names onto each.
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
# numpy's wheels carry their own OpenBLAS (ILP64, symbols scipy_*64_) in
# numpy.libs/: the BLAS of a machine with numpy and no other, such as the GPU
# machine. core/cpu/blas.h declares its few functions itself (no header ships).
function(ember_find_numpy_openblas out_lib)
  find_package(Python COMPONENTS Interpreter QUIET)
  if(NOT Python_Interpreter_FOUND)
    return()
  endif()
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c "import glob, os, numpy; d = os.path.join(os.path.dirname(numpy.__file__), os.pardir, 'numpy.libs'); print(os.path.realpath((sorted(glob.glob(os.path.join(d, 'libscipy_openblas64_*.so'))) or [''])[0]))"
    OUTPUT_VARIABLE _lib OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND EXISTS "${_lib}" AND NOT IS_DIRECTORY "${_lib}")
    set(${out_lib} "${_lib}" PARENT_SCOPE)
  endif()
endfunction()

if(NOT EMBER_BLAS_CHOSEN AND EMBER_BLAS STREQUAL "numpy")
  ember_find_numpy_openblas(_np_blas)
  if(NOT _np_blas)
    message(FATAL_ERROR "EMBER_BLAS=numpy but numpy's bundled OpenBLAS (numpy.libs/libscipy_openblas64_*.so) was not found")
  endif()
endif()
if(NOT EMBER_BLAS_CHOSEN AND NOT EMBER_BLAS STREQUAL "numpy")
  # OpenBLAS first (its thread count can be set); numpy's copy next; any CBLAS last.
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  find_path(EMBER_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas-pthread openblas)
  if(BLAS_FOUND AND EMBER_CBLAS_INCLUDE)
    target_compile_definitions(ember_blas INTERFACE EMBER_BLAS_OPENBLAS=1)
  else()
    if(EMBER_BLAS STREQUAL "AUTO")
      ember_find_numpy_openblas(_np_blas)
    endif()
    if(NOT _np_blas)
      unset(BLA_VENDOR)
      find_package(BLAS REQUIRED)
      find_path(EMBER_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas REQUIRED)
    endif()
  endif()
  if(NOT _np_blas)
    target_include_directories(ember_blas INTERFACE ${EMBER_CBLAS_INCLUDE})
    target_link_libraries(ember_blas INTERFACE ${BLAS_LIBRARIES})
    set(EMBER_BLAS_CHOSEN "system BLAS (${BLAS_LIBRARIES})")
    # OpenBLAS usually carries LAPACK (dgetrf_, ...); a plain CBLAS may not.
    include(CheckFunctionExists)
    set(CMAKE_REQUIRED_LIBRARIES ${BLAS_LIBRARIES})
    check_function_exists(dgetrf_ EMBER_SYSTEM_BLAS_HAS_LAPACK)
    unset(CMAKE_REQUIRED_LIBRARIES)
    set(_blas_has_lapack ${EMBER_SYSTEM_BLAS_HAS_LAPACK})
  endif()
endif()
if(_np_blas)
  target_link_libraries(ember_blas INTERFACE ${_np_blas})
  target_compile_definitions(ember_blas INTERFACE EMBER_BLAS_NUMPY_OPENBLAS64=1)
  get_filename_component(EMBER_BLAS_LIBDIR ${_np_blas} DIRECTORY)
  set(EMBER_BLAS_CHOSEN "numpy's bundled OpenBLAS, ILP64 (${_np_blas})")
endif()
message(STATUS "ember: BLAS = ${EMBER_BLAS_CHOSEN}")

# ember.linalg's CPU kernels call the LAPACK inside OpenBLAS (core/cpu/lapack.h
# names its symbols for each flavour). Only core/cpu/linalg.cpp sees the
# define, so no other object's compile line changes with it. Without LAPACK
# the build still links and linalg's factorizations say so when called.
if(EMBER_BLAS_CHOSEN MATCHES "^scipy-openblas32" OR _np_blas OR _blas_has_lapack)
  set(EMBER_HAS_LAPACK ON)
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/core/cpu/linalg.cpp PROPERTIES COMPILE_DEFINITIONS EMBER_HAS_LAPACK=1)
else()
  set(EMBER_HAS_LAPACK OFF)
  message(STATUS "ember: the BLAS has no LAPACK: ember.linalg's factorizations are unavailable on the CPU")
endif()
