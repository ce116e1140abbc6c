"""cmake/check_cxx_runtime.cmake, run after every link of libember: it must refuse a shared
library that carries its own copy of libstdc++ (the fault that crashed every C++ exception next
to PyTorch on the first GPU machine) and accept one that uses the shared libstdc++."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "cmake", "check_cxx_runtime.cmake")
SOURCE = "#include <sstream>\nstd::string show(unsigned long x) { std::ostringstream o; o << x; return o.str(); }\n"

pytestmark = pytest.mark.skipif(not (shutil.which("g++") and shutil.which("cmake") and shutil.which("nm")),
                                reason="needs g++, cmake and nm")


def _library(tmp_path, name, *flags):
    src = tmp_path / "show.cpp"
    src.write_text(SOURCE)
    lib = tmp_path / name
    subprocess.run(["g++", "-shared", "-fPIC", *flags, str(src), "-o", str(lib)], check=True)
    return lib


def _check(lib):
    return subprocess.run(["cmake", f"-DLIBRARY={lib}", "-DNM=nm", "-P", CHECK], capture_output=True, text=True)


def test_a_library_with_its_own_libstdcxx_is_refused_and_removed(tmp_path):
    lib = _library(tmp_path, "libstatic.so", "-static-libstdc++")
    result = _check(lib)
    assert result.returncode != 0
    message = " ".join(result.stderr.split())  # CMake wraps its messages at varying places
    assert "static copy of libstdc++" in message and "CMAKE_CXX_COMPILER" in message
    assert not lib.exists()  # so that the next build links it again instead of keeping it


def test_a_library_using_the_shared_libstdcxx_passes(tmp_path):
    lib = _library(tmp_path, "libshared.so")
    result = _check(lib)
    assert result.returncode == 0, result.stderr
    assert lib.exists()
