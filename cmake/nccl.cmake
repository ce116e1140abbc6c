# The NCCL process group (distributed/nccl/*.cpp): built when CUDA is on and
# cmake/cuda.cmake found NCCL (EMBER_HAS_NCCL, EMBER_NCCL_INCLUDE/LIBRARY). Its sources
# join the ember_cuda object library, which has the CUDA include paths;
# distributed/process_group.cpp gets EMBER_HAS_NCCL=1 to offer the backend.
if(EMBER_HAS_CUDA AND EMBER_HAS_NCCL)
  file(GLOB EMBER_NCCL_PG_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/distributed/nccl/*.cpp)
  target_sources(ember_cuda PRIVATE ${EMBER_NCCL_PG_SOURCES})
  # Headers only: nccl_api.cpp loads libnccl.so.2 at the first nccl group
  # (see there why it is not linked).
  # Set on these sources only, so the kernels' compile lines stay as they were.
  set_property(SOURCE ${EMBER_NCCL_PG_SOURCES} APPEND PROPERTY INCLUDE_DIRECTORIES ${EMBER_NCCL_INCLUDE})
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/distributed/nccl/nccl_api.cpp APPEND PROPERTY
               COMPILE_DEFINITIONS EMBER_NCCL_LIBRARY_PATH="${EMBER_NCCL_LIBRARY}")
  target_link_libraries(ember_cuda PUBLIC ${CMAKE_DL_LIBS})
  set_property(SOURCE distributed/process_group.cpp APPEND PROPERTY COMPILE_DEFINITIONS EMBER_HAS_NCCL=1)
  message(STATUS "ember: NCCL ${EMBER_NCCL_VERSION} process group (${EMBER_NCCL_LIBRARY})")
endif()
