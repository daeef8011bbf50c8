#!/usr/bin/env bash
# The Python package's CI step (`.ci/run` calls it after `cargo test
# --workspace`): a fresh venv, `pip install ./python` (maturin from PyPI,
# the extension built by cargo), the test tools at pinned versions,
# pytest against the installed package, `mypy --strict` on the examples.
#
# The package is built with cargo's dev profile here (MATURIN_PEP517_ARGS),
# which reuses the dependencies `cargo test --workspace` built (they are
# optimised in the dev profile); users get the release profile.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
py="$scratch/venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check \
    pytest==9.2.0 mypy==2.4.1 hypothesis==6.170.27 pyarrow==26.0.1 duckdb==2.0.1 \
    polars==2.1.0 pandas==3.1.2
MATURIN_PEP517_ARGS="${MATURIN_PEP517_ARGS:---profile dev}" \
    "$py" -m pip install -q --disable-pip-version-check ./python

# Tests import the installed package, never the source folder.
(cd python/tests && "$py" -m pytest -q -p no:cacheprovider .)
"$py" -m mypy --strict --no-incremental python/examples python/bench.py
# The README's example, as written.
"$py" python/examples/quickstart.py > /dev/null
