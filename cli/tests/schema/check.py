"""Validates contracts against rulec's JSON Schema with a real validator.

    python3 check.py SCHEMA WORKSPACE

Every example, conformance and `ok` fixture contract must be valid; every
file in `broken/` must be flagged where its first line says
(`# flags: PATH VALIDATOR`, PATH as jsonschema's `json_path`). YAML is read
as YAML 1.2 reads it (as yaml-language-server does): no timestamps, and
only `true`/`false` are booleans. Exits 1 on any mismatch.
"""

import copy
import json
import pathlib
import re
import sys

import jsonschema
import yaml


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader without YAML 1.1's timestamps and yes/no."""


Yaml12Loader.yaml_implicit_resolvers = copy.deepcopy(yaml.SafeLoader.yaml_implicit_resolvers)
for first, resolvers in Yaml12Loader.yaml_implicit_resolvers.items():
    resolvers[:] = [(tag, regexp) for tag, regexp in resolvers if not tag.endswith((":timestamp", ":bool"))]
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load(path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Yaml12Loader)


def main():
    schema = json.loads(pathlib.Path(sys.argv[1]).read_text(encoding="utf-8"))
    root = pathlib.Path(sys.argv[2])
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    valid = sorted(
        [*root.glob("examples/contracts/*.yaml"), *root.glob("conformance/cases/*/contract.yaml"),
         *root.glob("frontend/tests/fixtures/ok/*.yaml"), *root.glob("benches/data/*/*.yaml")]
    )
    broken = sorted(root.glob("cli/tests/schema/broken/*.yaml"))
    failures = []
    for path in valid:
        errors = list(validator.iter_errors(load(path)))
        for error in errors:
            failures.append(f"{path.relative_to(root)}: {error.json_path}: {error.message}")
    for path in broken:
        wanted = path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# flags: ").split()
        errors = list(validator.iter_errors(load(path)))
        found = [(e.json_path, e.validator) for e in errors]
        if tuple(wanted) not in found:
            failures.append(f"{path.relative_to(root)}: expected {wanted}, found {found}")
    for failure in failures:
        print(failure)
    print(f"{len(valid)} contracts valid, {len(broken)} broken ones flagged, {len(failures)} failures")
    return 1 if failures or len(valid) < 50 or len(broken) < 5 else 0


if __name__ == "__main__":
    sys.exit(main())
