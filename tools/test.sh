#!/usr/bin/env bash
# The README's second command and what CI runs (.ci/run): sets the machine up
# (tools/setup.sh: apt packages, Python deps, pip install -e .), then runs
#   1. the C++ tests (Catch2, tests/cpp) from a CMake build in build/cpp,
#   2. the Python tests (pytest, tests/python) against the installed package,
#   3. the C++ example (examples/cpp) built against the installed package
#      through find_package(ember),
#   4. short runs of the Python examples (examples/demo.py, examples/mnist.py
#      with a checkpoint and a resume, examples/ddp_mnist.py on 2 processes).
# Exits non-zero as soon as anything fails or a suite finds no tests.
# Environment: MAX_JOBS, EMBER_CMAKE_ARGS (also passed to the C++ test build),
# EMBER_CUDA_ARCHS (default 90 here: CI has no GPU, and one architecture keeps
# nvcc's share of the builds small; CMake reads it for the pip build too).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=${PYTHON:-python3}
export PYTHON=$python

SECONDS=0
step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
fail() { echo "test.sh: FAILED: $*" >&2; exit 1; }

export EMBER_CUDA_ARCHS=${EMBER_CUDA_ARCHS:-90}

step "setup (tools/setup.sh)"
tools/setup.sh
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
jobs=${MAX_JOBS:-$(nproc)}
read -r -a extra_cmake_args <<< "${EMBER_CMAKE_ARGS:-}"

# The tests must exercise this checkout, not another installed copy.
package=$(cd /tmp && "$python" -c 'import ember, os; print(os.path.dirname(os.path.realpath(ember.__file__)))')
[ "$package" = "$(realpath python/ember)" ] || fail "import ember finds $package, not this checkout's python/ember"

step "C++ tests: build (build/cpp)"
cmake -S . -B build/cpp -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_PYTHON=OFF \
  -DEMBER_CUDA_ARCHS="$EMBER_CUDA_ARCHS" -DPython_EXECUTABLE="$(command -v "$python")" "${extra_cmake_args[@]}" >/dev/null
cmake --build build/cpp -j "$jobs"
[ -x build/cpp/ember_tests ] || fail "the Catch2 test binary was not built (is Catch2 installed? apt-get install catch2)"

step "C++ tests: run"
(cd build/cpp && ctest --output-on-failure) || fail "C++ tests"

step "Python tests (pytest tests/python)"
set +e
"$python" -m pytest -q tests/python
rc=$?
set -e
[ $rc -ne 5 ] || fail "pytest collected no tests"
[ $rc -eq 0 ] || fail "Python tests (pytest exit code $rc)"

step "C++ example against the installed package (find_package(ember))"
prefix=$(cd /tmp && "$python" -c 'import ember; print(ember.cmake_prefix_path)')
cmake -S examples/cpp -B build/example -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/example
build/example/autograd_demo || fail "examples/cpp/autograd_demo"
build/example/digits_mlp || fail "examples/cpp/digits_mlp (needs >= 95% test accuracy)"

step "Python demo, short run (examples/demo.py --steps 40)"
"$python" examples/demo.py --steps 40 --log-every 20 || fail "examples/demo.py"

step "MNIST example, short run with a checkpoint and a resume (examples/mnist.py --limit 640)"
ckpt=build/mnist-smoke.safetensors
rm -f "$ckpt"
"$python" examples/mnist.py --epochs 1 --limit 640 --checkpoint "$ckpt" || fail "examples/mnist.py"
"$python" examples/mnist.py --epochs 2 --limit 640 --checkpoint "$ckpt" --resume | tee build/mnist-resume.log \
  || fail "examples/mnist.py --resume"
grep -q "resumed from" build/mnist-resume.log || fail "examples/mnist.py --resume did not resume"

step "DDP example, short run on 2 processes (ember-run --standalone --nproc-per-node 2 examples/ddp_mnist.py)"
"$python" -m ember.distributed.run --standalone --nproc-per-node 2 examples/ddp_mnist.py --epochs 1 --limit 640 \
  --checkpoint build/ddp-mnist-smoke.safetensors || fail "examples/ddp_mnist.py under ember-run"

step "all tests passed"
