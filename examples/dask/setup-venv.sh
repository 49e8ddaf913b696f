#!/usr/bin/env bash
# Creates (or reuses) a virtualenv with the packages of requirements.txt, every dependency
# pinned by constraints.txt:
#   bash examples/dask/setup-venv.sh DIR     -> DIR/bin/python
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:?usage: setup-venv.sh DIR}"
stamp="$venv/.requirements"
if [ -x "$venv/bin/python" ] && cat "$here/requirements.txt" "$here/constraints.txt" | cmp -s - "$stamp"; then
    exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    -r "$here/requirements.txt" -c "$here/constraints.txt"
cat "$here/requirements.txt" "$here/constraints.txt" >"$stamp"
