# The NCCL process group (distributed/nccl/*.cpp): built when CUDA is on and
# cmake/cuda.cmake found NCCL (EMBER_HAS_NCCL, target ember_nccl). Its sources
# join the ember_cuda object library, which has the CUDA include paths;
# distributed/process_group.cpp gets EMBER_HAS_NCCL=1 to offer the backend.
if(EMBER_HAS_CUDA AND EMBER_HAS_NCCL)
  file(GLOB EMBER_NCCL_PG_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/distributed/nccl/*.cpp)
  target_sources(ember_cuda PRIVATE ${EMBER_NCCL_PG_SOURCES})
  target_link_libraries(ember_cuda PUBLIC ember_nccl)
  set_property(SOURCE distributed/process_group.cpp APPEND PROPERTY COMPILE_DEFINITIONS EMBER_HAS_NCCL=1)
  get_filename_component(_nccl_dir ${EMBER_NCCL_LIBRARY} DIRECTORY)
  list(APPEND EMBER_CUDA_RPATH ${_nccl_dir})
  list(REMOVE_DUPLICATES EMBER_CUDA_RPATH)
  message(STATUS "ember: NCCL ${EMBER_NCCL_VERSION} process group (${EMBER_NCCL_LIBRARY})")
endif()
