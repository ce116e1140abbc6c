#!/usr/bin/env bash
# The README's first command: sets up the machine (tools/setup.sh) and trains
# the demo network (examples/demo.py). Extra arguments go to the demo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"
echo "==> python3 examples/demo.py $*"
exec "${PYTHON:-python3}" "$root/examples/demo.py" "$@"
