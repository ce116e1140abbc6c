#!/usr/bin/env bash
# Installs what ember needs on a Debian 12 (or Ubuntu) machine, then builds
# ember and installs it into the current Python in editable mode:
#   1. apt packages from tools/apt-packages.txt that are missing (needs root
#      or sudo; skipped when all are present, or with EMBER_SKIP_APT=1),
#   2. the Python build and test dependencies from PyPI,
#   3. pip install --no-build-isolation -e .  (CMake + Ninja, with ccache)
# Environment: MAX_JOBS (compile jobs, default: all cores), EMBER_CMAKE_ARGS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

python=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
# ccache: hits across build folders (build/py, build/cpp) and checkouts.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
export MAX_JOBS=${MAX_JOBS:-$(nproc)}

# ---- 1. system packages
if [ "${EMBER_SKIP_APT:-0}" != 1 ] && command -v dpkg-query >/dev/null; then
  missing=()
  while read -r pkg; do
    case "$pkg" in ''|'#'*) continue ;; esac
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done < tools/apt-packages.txt
  if [ ${#missing[@]} -gt 0 ]; then
    echo "==> apt-get install ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
      sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi

# ---- 2. Python build and test dependencies
echo "==> pip install build and test dependencies"
"$python" -m pip install -q -U pip setuptools wheel pybind11 numpy pytest scipy-openblas32 safetensors

# ---- 3. ember itself (editable: python/ember is the package)
echo "==> pip install --no-build-isolation -e .  (compiles the C++ core; a few minutes on 2 cores)"
"$python" -m pip install -q --no-build-isolation -e .
"$python" - <<'PY'
import ember
print(f"ember {ember.__version__} installed from {ember.__file__}")
PY
