"""Inputs and arguments built to break the conversion (issue 45): every
one an `InputError` naming where (`channel`, `now`, `input.amount`) or the
answer `rulec eval` gives, never a raw Python error, a panic, or a trace on
stderr."""

import datetime
import json
import subprocess
from decimal import Decimal
from typing import Any, Callable

import pyarrow as pa
import pytest

import rulec
from conftest import TRANSFER_YAML, rulec_binary, transfer_input

UTC = datetime.timezone.utc


def other_contract_request() -> str:
    return json.dumps({"contract": "acme.payments.transfr", "channel": "server", "input": {}})


def test_a_request_for_another_contract_is_unknown_contract(transfer: rulec.Contract) -> None:
    line = json.loads(transfer.evaluate_json(other_contract_request()))
    assert line["error"]["kind"] == "unknown_contract"
    assert "did you mean `acme.payments.transfer`?" in line["error"]["message"]


def test_a_request_for_another_contract_is_the_cli_line(transfer: rulec.Contract, tmp_path: Any) -> None:
    binary = rulec_binary()
    if binary is None:
        pytest.skip("no rulec binary (cargo build -p cli, or RULEC_BIN)")
    requests = tmp_path / "requests.ndjson"
    lines = [other_contract_request(), json.dumps({"channel": "server", "input": {"amount": 1}})]
    requests.write_text("\n".join(lines) + "\n", encoding="utf-8")
    printed = subprocess.run(
        [str(binary), "eval", str(TRANSFER_YAML), "--request", str(requests)],
        capture_output=True, text=True, check=False,
    ).stdout.splitlines()
    assert [transfer.evaluate_json(line).rstrip("\n") for line in lines] == printed


def test_a_request_with_a_lone_surrogate_is_an_error_line(transfer: rulec.Contract) -> None:
    request = '{"channel": "server", "input": {"currency": "\ud800"}}'
    line = json.loads(transfer.evaluate_json(request))
    assert line["error"]["kind"] == "invalid_input"
    assert "not UTF-8" in line["error"]["details"][0]["message"]
    set_line = json.loads(rulec.ContractSet(TRANSFER_YAML).evaluate_line(request))
    assert set_line == line


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.evaluate_batch(pa.table({"amount": [1]})), "channel= is required: the contract declares channels"),
        (lambda c: c.evaluate_batch(pa.table({"amount": [1]}), channel="fax"), 'channel=: unknown channel "fax"'),
    ],
)
def test_the_arrow_path_names_the_parameter(
    transfer: rulec.Contract, call: Callable[[rulec.Contract], object], message: str
) -> None:
    with pytest.raises(rulec.InputError) as refused:
        call(transfer)
    assert str(refused.value).startswith(message)
    assert "--channel" not in str(refused.value)


class FailingZone(datetime.tzinfo):
    """A tzinfo whose utcoffset raises."""

    def utcoffset(self, dt: "datetime.datetime | None") -> datetime.timedelta:
        raise ValueError("no offset today")


AMSTERDAM_1930 = datetime.timezone(datetime.timedelta(minutes=19, seconds=32))
SET = rulec.ContractSet(TRANSFER_YAML)


def by_contract(c: rulec.Contract, **arguments: Any) -> object:
    arguments.setdefault("channel", "server")
    value = arguments.pop("input", transfer_input())
    return c.evaluate(value, **arguments)


def by_set(c: rulec.Contract, **arguments: Any) -> object:
    arguments.setdefault("channel", "server")
    value = arguments.pop("input", transfer_input())
    return SET.evaluate(value, **arguments)


def in_a_list(c: rulec.Contract, **arguments: Any) -> object:
    return c.evaluate_batch([arguments.pop("input", transfer_input())], **arguments)


@pytest.mark.parametrize("evaluate", [by_contract, by_set])
@pytest.mark.parametrize(
    ("arguments", "path", "message"),
    [
        ({"channel": "\ud800"}, "channel", "lone surrogate"),
        ({"component": "\udfff"}, "component", "lone surrogate"),
        ({"now": "\ud800"}, "now", "lone surrogate"),
        ({"now": datetime.datetime(2026, 1, 1, tzinfo=FailingZone())}, "now", "ValueError: no offset today"),
        ({"input": transfer_input(amount="\ud800")}, "input.amount", "lone surrogate"),
        ({"input": transfer_input(at=datetime.datetime(2026, 1, 1, tzinfo=FailingZone()))}, "input.at",
         "ValueError: no offset today"),
    ],
)
def test_arguments_and_values_are_input_errors(
    transfer: rulec.Contract, evaluate: Callable[..., object], arguments: dict, path: str, message: str
) -> None:
    with pytest.raises(rulec.InputError) as refused:
        evaluate(transfer, **arguments)
    assert [d["path"] for d in refused.value.details] == [path]
    assert message in refused.value.details[0]["message"]


@pytest.mark.parametrize("evaluate", [in_a_list, lambda c, **a: c.evaluate_batch(pa.table({"amount": [1]}), **a)])
def test_a_lone_surrogate_channel_in_a_batch(transfer: rulec.Contract, evaluate: Callable[..., object]) -> None:
    with pytest.raises(rulec.InputError, match="^channel: a str that is not valid Unicode"):
        evaluate(transfer, channel="\ud800")
    with pytest.raises(rulec.InputError, match="^contract: a str that is not valid Unicode"):
        SET.evaluate(transfer_input(), contract="\ud800", channel="server")


@pytest.mark.parametrize(
    ("offset", "now", "utc"),
    [
        (AMSTERDAM_1930, datetime.datetime(1930, 1, 1), "1929-12-31T23:40:28Z"),
        (datetime.timezone(-datetime.timedelta(hours=4, minutes=56, seconds=2)), datetime.datetime(1883, 11, 18, 12),
         "1883-11-18T16:56:02Z"),
        (datetime.timezone(datetime.timedelta(seconds=1, microseconds=5)), datetime.datetime(2026, 1, 1, 0, 0, 1, 5),
         "2026-01-01T00:00:00Z"),
    ],
)
def test_an_offset_with_seconds_is_the_same_instant(
    transfer: rulec.Contract, offset: datetime.tzinfo, now: datetime.datetime, utc: str
) -> None:
    given = transfer.evaluate(transfer_input(), channel="server", now=now.replace(tzinfo=offset))
    said = transfer.evaluate(transfer_input(), channel="server", now=utc)
    assert given.to_json() == said.to_json()


class Mutating(Decimal):
    """A Decimal whose `__str__` runs `change` on the input being read."""

    change: Callable[[], None] = staticmethod(lambda: None)

    def __str__(self) -> str:
        type(self).change()
        return super().__str__()


class MutatingDict(dict):
    """A dict whose `items`, `keys` and `__iter__` add a key."""

    def items(self) -> Any:
        self["added"] = 1
        return super().items()

    def keys(self) -> Any:
        self["added"] = 1
        return super().keys()

    def __iter__(self) -> Any:
        self["added"] = 1
        return super().__iter__()


class MutatingKey(str):
    """A key whose `__eq__` and `__hash__` clear the dict it is in."""

    holder: dict = {}

    def __eq__(self, other: object) -> bool:
        type(self).holder.clear()
        return str.__eq__(self, other)

    def __hash__(self) -> int:
        type(self).holder.clear()
        return str.__hash__(self)


def mutated_inputs() -> list:
    """Inputs holding a `Mutating` value, and what its `__str__` does."""
    cases = []
    for change in ("grow", "clear", "swap"):
        value = transfer_input(amount=Mutating("1"))
        actions: dict = {
            "grow": lambda v=value: v.__setitem__(f"x{len(v)}", 1),
            "clear": value.clear,
            "swap": lambda v=value: (v.pop("currency", None), v.__setitem__("other", 1)),
        }
        # A swap leaves the size: the input read is the changed one.
        seen = "input.currency: missing" if change == "swap" else "input: the dict changed while it was read"
        cases.append(pytest.param(value, actions[change], seen, id=change))
    listed = transfer_input()
    listed["tags"] = [Mutating("1"), "b"]
    changed = "input.tags: the list changed while it was read"
    cases.append(pytest.param(listed, lambda: listed["tags"].append("x"), changed, id="list grows"))
    shrunk = transfer_input()
    shrunk["tags"] = [Mutating("1"), "b", "c"]
    cases.append(pytest.param(shrunk, lambda: shrunk["tags"].pop(), changed, id="list shrinks"))
    return cases


@pytest.mark.parametrize(("value", "change", "message"), mutated_inputs())
def test_an_input_changed_while_it_is_read(
    transfer: rulec.Contract, capfd: pytest.CaptureFixture[str], value: dict, change: Callable[[], None], message: str
) -> None:
    """An InputError (the change seen, or the changed input not fitting),
    never a panic and nothing on stderr."""
    Mutating.change = staticmethod(change)
    try:
        with pytest.raises(rulec.InputError) as refused:
            transfer.evaluate(value, channel="server")
    finally:
        Mutating.change = staticmethod(lambda: None)
    assert str(refused.value).startswith(message)
    assert capfd.readouterr().err == ""


def test_a_dict_whose_methods_change_it(transfer: rulec.Contract, capfd: pytest.CaptureFixture[str]) -> None:
    # Its methods are not called: the dict is read as the dict it is.
    transfer.evaluate(MutatingDict(transfer_input()), channel="server")
    key = MutatingKey("currency")
    value = transfer_input()
    del value["currency"]
    value[key] = "EUR"
    MutatingKey.holder = value
    transfer.evaluate(value, channel="server")
    assert capfd.readouterr().err == ""


def test_a_list_of_inputs_changed_while_it_is_read(
    transfer: rulec.Contract, capfd: pytest.CaptureFixture[str]
) -> None:
    records = [transfer_input(), transfer_input(), transfer_input()]
    records[0]["amount"] = Mutating("1")
    Mutating.change = staticmethod(lambda: records.pop())
    try:
        with pytest.raises(rulec.InputError, match="changed while it was read"):
            transfer.evaluate_batch(records, channel="server")
    finally:
        Mutating.change = staticmethod(lambda: None)
    assert capfd.readouterr().err == ""
