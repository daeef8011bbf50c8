"""Every conformance case through the package: each request line gives the
snapshot's result line, byte for byte, through ``ContractSet.evaluate_line``
(the CLI's line path) and, for requests whose input is a dict, through
``evaluate(...).to_json()`` (or ``InputError.json`` for a refused one), on
the interpreter and on native code; windows keep their state across the
calls of one case."""

import json
from decimal import Decimal
from pathlib import Path
from typing import List, Tuple

import pytest

import rulec
from conftest import CONFORMANCE

CASES = sorted(p for p in (CONFORMANCE / "cases").iterdir() if p.is_dir())
ENVELOPE_KEYS = {"contract", "channel", "component", "now", "input"}


def pairs(case: Path) -> List[Tuple[str, str]]:
    """The (request, result) lines of a case's snapshot."""
    snapshot = CONFORMANCE / "tests" / "snapshots" / f"case@{case.name}.snap"
    lines = snapshot.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("> ") and i + 1 < len(lines) and lines[i + 1].startswith("< "):
            out.append((line[2:], lines[i + 1][2:]))
    return out


def load(case: Path, engine: str) -> rulec.ContractSet:
    try:
        return rulec.ContractSet(case, engine=engine)
    except rulec.BundleError as e:
        if "host function" in str(e):
            pytest.skip(f"{case.name} needs host functions, which Python does not register")
        raise


def as_dict_request(line: str) -> "dict | None":
    """The request as a dict whose input Python writes back to the same
    values (numbers kept as their text), or None when it does not fit."""
    try:
        request = json.loads(line, parse_float=Decimal, parse_int=_int)
    except (ValueError, ArithmeticError):
        return None
    if not isinstance(request, dict) or not set(request) <= ENVELOPE_KEYS:
        return None
    if not isinstance(request.get("input"), dict):
        return None
    if any(c in line for c in "eE") and any(ch.isdigit() for ch in line):
        # An exponent's text is written back as Decimal spells it; a
        # refusal would echo it differently.
        if _has_exponent(line):
            return None
    return request


def _int(text: str) -> "int | Decimal":
    """An int, but `-0` (a float's negative zero) as the Decimal `-0`."""
    return Decimal(text) if text == "-0" else int(text)


def _has_exponent(line: str) -> bool:
    import re

    return re.search(r"[0-9][eE][+-]?[0-9]", _strip_strings(line)) is not None


def _strip_strings(line: str) -> str:
    import re

    return re.sub(r'"(\\.|[^"\\])*"', '""', line)


@pytest.mark.parametrize("engine", ["interp", "jit"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_request_lines_give_the_cli_bytes(case: Path, engine: str) -> None:
    contracts = load(case, engine)
    for request, expected in pairs(case):
        assert contracts.evaluate_line(request) == expected, request


@pytest.mark.parametrize("engine", ["interp", "jit"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_dict_inputs_give_the_cli_bytes(case: Path, engine: str) -> None:
    contracts = load(case, engine)
    checked = 0
    for line, expected in pairs(case):
        request = as_dict_request(line)
        if request is None:
            # Windows must see every record in order: feed it the line.
            contracts.evaluate_line(line)
            continue
        try:
            result = contracts.evaluate(
                request["input"],
                contract=request.get("contract"),
                channel=request.get("channel"),
                component=request.get("component"),
                now=request.get("now"),
            )
            got = result.to_json()
        except rulec.InputError as e:
            got = e.json
        except rulec.UnknownContractError as e:
            got = json.dumps({"error": {"kind": "unknown_contract", "message": str(e)}}, ensure_ascii=False)
        assert got == expected, line
        checked += 1
    assert checked > 0 or not pairs(case)
