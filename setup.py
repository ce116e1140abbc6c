"""Builds ember's CMake project and installs it inside the Python package.

The package directory receives the extension (ember/_C*.so) and a CMake
install tree (ember/lib/libember.so, ember/include/ember/, ember/lib/cmake/ember),
so C++ programs can find_package(ember) with
CMAKE_PREFIX_PATH=$(python -c "import ember; print(ember.cmake_prefix_path)").

Environment: EMBER_CMAKE_ARGS (extra -D options), EMBER_BUILD_DIR (default
build/py), MAX_JOBS (parallel compile jobs).
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if getattr(self, "editable_mode", False) or self.inplace:
            # pip install -e: the package is the source folder itself.
            package_dir = ROOT / "python" / "ember"
        else:
            package_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = Path(os.environ.get("EMBER_BUILD_DIR", ROOT / "build" / "py")).resolve()
        build_dir.mkdir(parents=True, exist_ok=True)
        args = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DEMBER_BUILD_PYTHON=ON",
            "-DEMBER_BUILD_TESTS=OFF",  # tools/test.sh builds the C++ tests in build/cpp
            f"-DCMAKE_INSTALL_PREFIX={package_dir}",
            "-DCMAKE_INSTALL_LIBDIR=lib",
        ] + shlex.split(os.environ.get("EMBER_CMAKE_ARGS", ""))
        subprocess.check_call(args)
        build = ["cmake", "--build", str(build_dir)]
        if os.environ.get("MAX_JOBS"):
            build += ["-j", os.environ["MAX_JOBS"]]
        subprocess.check_call(build)
        subprocess.check_call(["cmake", "--install", str(build_dir)])
        # setuptools then copies the extension from where it expects it.
        expected = Path(self.get_ext_fullpath(ext.name)).resolve()
        built = package_dir / expected.name
        if built != expected:
            expected.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(built, expected)


setup(ext_modules=[CMakeExtension("ember._C")], cmdclass={"build_ext": CMakeBuild})
