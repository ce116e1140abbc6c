# After linking libember, fails the build when the library carries a copy of
# libstdc++ of its own (a static libstdc++.a pulled in through a stray library
# folder or a compiler that links it statically). Next to the shared libstdc++
# that the rest of the process loads (Python's other extensions, PyTorch,
# cuDNN) the two copies disagree about locale facets and exception state: on
# a GPU image, ember crashed formatting its first error message that way.
# EMBER_ALLOW_STATIC_LIBSTDCXX=ON skips the check.
option(EMBER_ALLOW_STATIC_LIBSTDCXX "Allow a libember that links libstdc++ statically" OFF)

function(ember_check_cxx_runtime target)
  if(EMBER_ALLOW_STATIC_LIBSTDCXX OR NOT CMAKE_NM OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DLIBRARY=$<TARGET_FILE:${target}> -DNM=${CMAKE_NM}
            -P ${CMAKE_SOURCE_DIR}/cmake/check_cxx_runtime.cmake
    VERBATIM)
endfunction()
