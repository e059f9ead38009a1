#!/usr/bin/env bash
# Create the virtual environment and install assay, every plugin under plugins/ (editable)
# and the test dependencies. Called by `make setup` (and so by `make run` / `make test`).
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
cd "$(dirname "$0")/.."

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
# Editable installs and the tests' own `pip install` of the plugin template need a modern setuptools.
"${PIP[@]}" --upgrade "pip>=23.1" "setuptools>=68" wheel

# Spark (issue 5): pyspark 4.x needs a Java 17+ runtime; install one when missing.
bash scripts/ensure-java.sh >/dev/null

args=(-e ".[test,plot,spark,dask]")
for plugin in plugins/*/; do
    [ -f "$plugin/pyproject.toml" ] && args+=(-e "$plugin[test]")
done
"${PIP[@]}" "${args[@]}"
echo "assay installed in $VENV with plugins: $(ls plugins | tr '\n' ' ')"
