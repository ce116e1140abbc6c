# cmake -DLIBRARY=<shared library> -DNM=<nm> -P check_cxx_runtime.cmake: fails
# when LIBRARY defines libstdc++'s own symbols (see cxx_runtime.cmake).
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(rc EQUAL 0 AND symbols MATCHES "_ZNSt6locale7classicEv")
  file(REMOVE ${LIBRARY})
  message(FATAL_ERROR
    "${LIBRARY} contains a static copy of libstdc++ (it defines std::locale::classic), which crashes next to "
    "the libstdc++ the rest of the process loads. Look for a libstdc++.a in the link's -L folders "
    "(ninja -t commands) or a compiler that links it statically, and configure a fresh build folder with "
    "the system compiler (-DCMAKE_CXX_COMPILER=/usr/bin/g++). -DEMBER_ALLOW_STATIC_LIBSTDCXX=ON skips this check.")
endif()
