# The CUDA backend. Options (CMakeLists.txt): EMBER_CUDA, EMBER_CUDA_ARCHS, EMBER_CUDNN.
#
# EMBER_CUDA=AUTO turns CUDA on when nvcc and the toolkit are found; ON
# requires them; OFF builds for the CPU only (cuda/no_cuda.cpp answers every
# CUDA call with "built without CUDA").
#
# EMBER_CUDA_ARCHS lists compute capabilities without dots ("80;86;89;90"):
# SASS is built for each and PTX for the last, so GPUs newer than the list
# still run (the driver JIT-compiles the PTX). The environment variable of the
# same name, when set, overrides the cache: `EMBER_CUDA_ARCHS=90 pip install .`.
# Each architecture costs compile time; CI (no GPU) builds only 90.
#
# Sets EMBER_HAS_CUDA, EMBER_HAS_CUDNN, EMBER_HAS_NCCL and, when CUDA is on,
# the object library ember_cuda (cuda/*.cu and the runtime-calling cuda/*.cpp)
# that CMakeLists.txt links into libember. Files in EMBER_CUDA_PORTABLE need
# no CUDA headers: they are compiled in every build, so their tests run on
# machines without a GPU or a toolkit.
set(EMBER_CUDA_PORTABLE
  cuda/caching_allocator.cpp
  cuda/host_allocator.cpp
  cuda/arch_list.cpp
  cuda/staged_copy.cpp
  cuda/format.cpp)
# (cuda/build_info.cpp, also portable, is added by CMakeLists.txt: it reads the generated header.)
set(EMBER_HAS_CUDA OFF)
set(EMBER_HAS_CUDNN OFF)
set(EMBER_HAS_NCCL OFF)
set(EMBER_CUDNN_VERSION "")
set(EMBER_NCCL_VERSION "")

if(DEFINED ENV{EMBER_CUDA_ARCHS} AND NOT "$ENV{EMBER_CUDA_ARCHS}" STREQUAL "")
  set(EMBER_CUDA_ARCHS "$ENV{EMBER_CUDA_ARCHS}" CACHE STRING "" FORCE)
endif()

if(NOT EMBER_CUDA STREQUAL "OFF")
  # nvcc is often not on PATH; look where toolkits install it too.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(EMBER_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES bin)
    if(EMBER_NVCC)
      set(CMAKE_CUDA_COMPILER ${EMBER_NVCC} CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(EMBER_HAS_CUDA ON)
  elseif(EMBER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBER_CUDA=ON but nvcc or the CUDA toolkit was not found "
                        "(put nvcc on PATH or pass -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)")
  else()
    message(STATUS "ember: CUDA toolkit not found: CPU-only build")
  endif()
endif()

# cuda/no_cuda*.cpp: the CPU build's stand-ins for the CUDA seam (one file per
# area: no_cuda.cpp for devices and memory, no_cuda_<family>.cpp for kernels).
file(GLOB EMBER_NO_CUDA_SOURCES CONFIGURE_DEPENDS cuda/no_cuda*.cpp)
if(NOT EMBER_HAS_CUDA)
  list(APPEND EMBER_SOURCES ${EMBER_NO_CUDA_SOURCES})
  set(EMBER_CUDA_ARCH_LIST "")
  return()
endif()

# "80;86;89;90" -> CMAKE_CUDA_ARCHITECTURES "80-real;86-real;89-real;90" (90: SASS + PTX).
set(_archs ${EMBER_CUDA_ARCHS})
list(LENGTH _archs _n)
if(_n EQUAL 0)
  message(FATAL_ERROR "EMBER_CUDA_ARCHS is empty: give compute capabilities such as 90 or 80;90")
endif()
set(_cmake_archs "")
set(EMBER_CUDA_ARCH_LIST "")
math(EXPR _last "${_n} - 1")
foreach(_i RANGE ${_last})
  list(GET _archs ${_i} _a)
  if(NOT _a MATCHES "^[0-9]+[af]?$")
    message(FATAL_ERROR "EMBER_CUDA_ARCHS: '${_a}' is not a compute capability such as 86 or 90a")
  endif()
  if(_i EQUAL _last)
    list(APPEND _cmake_archs "${_a}")
    list(APPEND EMBER_CUDA_ARCH_LIST "sm_${_a}" "compute_${_a}")
  else()
    list(APPEND _cmake_archs "${_a}-real")
    list(APPEND EMBER_CUDA_ARCH_LIST "sm_${_a}")
  endif()
endforeach()
set(CMAKE_CUDA_ARCHITECTURES ${_cmake_archs})
enable_language(CUDA)
# CMake links libember with nvcc's implicit library folders, which include its
# host compiler's. Where that is another toolchain (a GPU image's /opt/gcc), its
# libstdc++.a is found before the system's libstdc++.so and linked into
# libember: a second C++ runtime that crashes next to the process's own. Only
# the folders of the CUDA runtime (cudart, cudadevrt, the driver stub) are
# needed; cmake/cxx_runtime.cmake checks the result after every link.
set(ember_cuda_link_dirs)
foreach(dir IN LISTS CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES)
  file(GLOB ember_cuda_runtime "${dir}/libcudart*" "${dir}/libcudadevrt*" "${dir}/libcuda.so")
  if(ember_cuda_runtime)
    list(APPEND ember_cuda_link_dirs ${dir})
  endif()
endforeach()
set(CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES ${ember_cuda_link_dirs})
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
message(STATUS "ember: CUDA ${CUDAToolkit_VERSION}, architectures ${EMBER_CUDA_ARCH_LIST}")

file(GLOB EMBER_CUDA_SOURCES CONFIGURE_DEPENDS cuda/*.cpp cuda/*.cu)
list(REMOVE_ITEM EMBER_CUDA_SOURCES ${EMBER_NO_CUDA_SOURCES} ${CMAKE_SOURCE_DIR}/cuda/build_info.cpp)
foreach(_f ${EMBER_CUDA_PORTABLE})
  list(REMOVE_ITEM EMBER_CUDA_SOURCES ${CMAKE_SOURCE_DIR}/${_f})
endforeach()

# A separate target keeps the CUDA include paths and defines off the core's
# compile lines (so the core's objects stay shared in ccache with CPU builds).
add_library(ember_cuda OBJECT ${EMBER_CUDA_SOURCES})
target_include_directories(ember_cuda PRIVATE ${EMBER_INCLUDE_ROOT})
target_compile_options(ember_cuda PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -O3>
  $<$<COMPILE_LANGUAGE:CUDA>:-O3 --expt-relaxed-constexpr --extended-lambda>)
set_target_properties(ember_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON)
# cudart statically: libember then needs no libcudart.so at import time.
# cuBLAS/cuBLASLt, cuSOLVER (ember.linalg), cuFFT (ember.fft) and cuDNN are shared; RPATHs point
# at the toolkit.
target_link_libraries(ember_cuda PUBLIC CUDA::cudart_static CUDA::cublas CUDA::cublasLt CUDA::cusolver CUDA::cufft)
set(EMBER_CUDA_RPATH ${CUDAToolkit_LIBRARY_DIR})

# cuDNN 9: header and library in the toolkit or in the system paths.
# Last resort: the nvidia-cudnn-cu13 wheel of a Python environment (PyTorch's).
if(EMBER_CUDNN)
  set(_cudnn_wheel "")
  find_package(Python COMPONENTS Interpreter QUIET)
  if(Python_Interpreter_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
                    OUTPUT_VARIABLE _cudnn_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  find_path(EMBER_CUDNN_INCLUDE cudnn_version.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} PATHS /usr/include /usr/include/x86_64-linux-gnu ${_cudnn_wheel}/include)
  find_library(EMBER_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
    PATHS /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib /usr/local/cuda/lib64 ${_cudnn_wheel}/lib)
  if(EMBER_CUDNN_INCLUDE AND EMBER_CUDNN_LIBRARY)
    file(STRINGS ${EMBER_CUDNN_INCLUDE}/cudnn_version.h _v REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
    string(REGEX REPLACE ".*CUDNN_MAJOR +([0-9]+).*" "\\1" _maj "${_v}")
    string(REGEX REPLACE ".*CUDNN_MINOR +([0-9]+).*" "\\1" _min "${_v}")
    string(REGEX REPLACE ".*CUDNN_PATCHLEVEL +([0-9]+).*" "\\1" _pat "${_v}")
    set(EMBER_CUDNN_VERSION "${_maj}.${_min}.${_pat}")
    set(EMBER_HAS_CUDNN ON)
    target_include_directories(ember_cuda PUBLIC ${EMBER_CUDNN_INCLUDE})
    target_link_libraries(ember_cuda PUBLIC ${EMBER_CUDNN_LIBRARY})
    target_compile_definitions(ember_cuda PRIVATE EMBER_HAS_CUDNN=1)
    get_filename_component(_cudnn_dir ${EMBER_CUDNN_LIBRARY} DIRECTORY)
    list(APPEND EMBER_CUDA_RPATH ${_cudnn_dir})
    message(STATUS "ember: cuDNN ${EMBER_CUDNN_VERSION} (${EMBER_CUDNN_LIBRARY})")
  else()
    message(STATUS "ember: cuDNN not found (install cuDNN 9 or pass -DEMBER_CUDNN=OFF): conv/pool/batch norm on the GPU will be unavailable")
  endif()
endif()

# NCCL: found and its version recorded; distributed/nccl/ loads it at run time (cmake/nccl.cmake).
find_path(EMBER_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} PATHS /usr/include)
find_library(EMBER_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} PATHS /usr/lib/x86_64-linux-gnu)
if(EMBER_NCCL_INCLUDE AND EMBER_NCCL_LIBRARY)
  file(STRINGS ${EMBER_NCCL_INCLUDE}/nccl.h _v REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  string(REGEX REPLACE ".*NCCL_MAJOR +([0-9]+).*" "\\1" _maj "${_v}")
  string(REGEX REPLACE ".*NCCL_MINOR +([0-9]+).*" "\\1" _min "${_v}")
  string(REGEX REPLACE ".*NCCL_PATCH +([0-9]+).*" "\\1" _pat "${_v}")
  set(EMBER_NCCL_VERSION "${_maj}.${_min}.${_pat}")
  set(EMBER_HAS_NCCL ON)
  add_library(ember_nccl INTERFACE)
  target_include_directories(ember_nccl INTERFACE ${EMBER_NCCL_INCLUDE})
  target_link_libraries(ember_nccl INTERFACE ${EMBER_NCCL_LIBRARY})
endif()

list(REMOVE_DUPLICATES EMBER_CUDA_RPATH)
