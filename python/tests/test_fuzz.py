"""A seeded fuzz of the dict conversion: random nested values of every
kind (wrong types, huge ints, NaN, non-string keys, deep nesting) against
the transfer contract and a contract of every type. Each call either
evaluates or raises `InputError`; nothing crashes or raises anything else."""

import datetime
import random
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rulec
from conftest import transfer_input
from contracts import ECHO

LEAVES = [
    lambda r: None, lambda r: r.random() < 0.5, lambda r: r.randint(-(2**70), 2**70),
    lambda r: 10 ** r.randint(0, 400), lambda r: r.uniform(-1e300, 1e300),
    lambda r: r.choice([float("nan"), float("inf"), -0.0]),
    lambda r: Decimal(r.randint(-(10**30), 10**30)).scaleb(r.randint(-40, 40)),
    lambda r: r.choice([Decimal("NaN"), Decimal("-0"), Decimal("sNaN"), Decimal("Infinity")]),
    lambda r: "".join(chr(r.randint(0, 0x2FFF)) for _ in range(r.randint(0, 12))),
    lambda r: datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=r.randint(-10**9, 10**9)),
    lambda r: datetime.datetime(2026, 1, 1), lambda r: datetime.timedelta(days=r.randint(-10**6, 10**6)),
    lambda r: b"bytes", lambda r: object(), lambda r: {1, 2}, lambda r: datetime.date(2026, 1, 1),
]
FIELDS = ["amount", "currency", "daily_total", "source", "destination", "tags", "purpose", "price", "count",
          "ratio", "at", "wait", "nested", "level", "account", "country", "kyc_level", 3, None, (1, 2)]


def value(r: random.Random, depth: int) -> Any:
    if depth > 4 or r.random() < 0.5:
        return r.choice(LEAVES)(r)
    if r.random() < 0.5:
        return [value(r, depth + 1) for _ in range(r.randint(0, 4))]
    return {r.choice(FIELDS): value(r, depth + 1) for _ in range(r.randint(0, 5))}


def check(contract: rulec.Contract, input: Any, channel: "str | None") -> None:
    try:
        result = contract.evaluate(input, channel=channel)
        assert result.decision in ("allow", "deny")
        result.to_json()
        result.to_dict()
    except rulec.InputError as e:
        assert e.details and all(d["path"] or d["message"] for d in e.details)


@pytest.mark.parametrize("seed", range(8))
def test_seeded_random_inputs_never_crash(transfer: rulec.Contract, seed: int) -> None:
    r = random.Random(seed)
    echo = rulec.compile_text(ECHO)
    for _ in range(400):
        check(transfer, value(r, 0), "server")
        base = transfer_input()
        base[r.choice(list(base))] = value(r, 1)
        check(transfer, base, r.choice(["server", "batch", "nope", None]))
        check(echo, value(r, 0), None)


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.decimals() | st.text() | st.binary(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text() | st.integers(), children, max_size=4),
    max_leaves=20,
)


ECHO_CONTRACT = rulec.compile_text(ECHO)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(json_like)
def test_hypothesis_inputs_never_crash(value: Any) -> None:
    echo = ECHO_CONTRACT
    check(echo, value, None)
    check(echo, {"price": value, "count": value, "nested": value, "tags": value}, None)
