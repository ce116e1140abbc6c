#!/usr/bin/env bash
# Developer build without pip: builds into build/dev and links the extension
# into python/ember, so `PYTHONPATH=python python -m pytest tests/python` runs
# against this checkout. Usage: tools/dev.sh [extra cmake -D options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/dev
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
export CCACHE_NOHASHDIR=true
if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v python3)" "$@" >/dev/null
fi
ninja -C "$build" -j "${JOBS:-2}" | grep -v '^\[' || true
test "${PIPESTATUS[0]}" -eq 0
for so in "$build"/_C*.so; do
  ln -sf "$so" "$root/python/ember/$(basename "$so")"
done
