#!/usr/bin/env bash
# The README's first command: sets up the machine (tools/setup.sh) and trains
# the MNIST convnet on the bundled images (examples/mnist.py), on the GPU when
# ember can use one. Extra arguments go to the example.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"
cd "$root"
echo "==> python3 examples/mnist.py $*"
exec "${PYTHON:-python3}" examples/mnist.py "$@"
