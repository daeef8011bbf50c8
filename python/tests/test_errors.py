"""Errors: an input that does not fit (the CLI's message and path), values
JSON cannot hold, a contract that does not compile (every diagnostic, the
rendered text), a damaged bundle."""

import datetime
import json
from decimal import Decimal
from pathlib import Path

import pytest

import rulec
from conftest import transfer_input
from contracts import BROKEN


def test_an_invalid_input_has_the_cli_message(transfer: rulec.Contract) -> None:
    source = {"account": "A", "country": "DE", "account_age_days": 1, "kyc_level": "2"}
    with pytest.raises(rulec.InputError) as refused:
        transfer.evaluate(transfer_input(source=source), channel="server")
    assert str(refused.value) == 'input.source.kyc_level: expected int, got "2"'
    assert refused.value.details == [{"path": "input.source.kyc_level", "message": 'expected int, got "2"'}]
    assert refused.value.record is None
    line = json.dumps({"channel": "server", "input": {**transfer_input(), "source": source}}, default=str)
    assert refused.value.json == transfer.evaluate_json(line)


def test_every_problem_is_reported(transfer: rulec.Contract) -> None:
    value = transfer_input(currency="XXX")
    del value["tags"]
    with pytest.raises(rulec.InputError) as refused:
        transfer.evaluate(value, channel="server")
    paths = [d["path"] for d in refused.value.details]
    assert paths == ["input.currency", "input.tags"]


def test_channels_are_checked(transfer: rulec.Contract) -> None:
    with pytest.raises(rulec.InputError, match=r"channel: unknown channel \"fax\""):
        transfer.evaluate(transfer_input(), channel="fax")
    with pytest.raises(rulec.InputError, match="channel: missing"):
        transfer.evaluate(transfer_input())
    # A list is checked for its channel even when it holds no record.
    with pytest.raises(rulec.InputError, match=r"channel: unknown channel \"fax\""):
        transfer.evaluate_batch([], channel="fax")
    assert transfer.evaluate_batch([], channel="server") == []


class Sly(Decimal):
    """A Decimal whose text would change the JSON around it."""

    def __str__(self) -> str:
        return '1, "currency": "XXX"'


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        (float("nan"), "input.amount", "a float must be finite"),
        (float("inf"), "input.amount", "a float must be finite"),
        (Decimal("NaN"), "input.amount", "a decimal must be finite"),
        (Decimal("-Infinity"), "input.amount", "a decimal must be finite"),
        (b"12", "input.amount", "cannot send a value of type bytes"),
        ({1: "x"}, "input.amount", "a key is not a str: 1 (int)"),
        (datetime.datetime(2026, 1, 1), "input.amount", "a datetime without a timezone"),
        (datetime.date(2026, 1, 1), "input.amount", "a date: give a datetime"),
        ("\ud800", "input.amount", "lone surrogate"),
        (Decimal("sNaN"), "input.amount", "a decimal must be finite"),
        (Sly("1"), "input.amount", "a Decimal whose text is not a number"),
        ({"größe": [float("nan")]}, "input.amount.größe[0]", "a float must be finite"),
        ({"a": {"\ud800": 1}}, "input.amount.a", "lone surrogate"),
    ],
)
def test_values_json_cannot_hold_are_refused_with_their_path(
    transfer: rulec.Contract, value: object, path: str, message: str
) -> None:
    with pytest.raises(rulec.InputError) as refused:
        transfer.evaluate(transfer_input(amount=value), channel="server")
    assert refused.value.details[0]["path"] == path
    assert message in refused.value.details[0]["message"]


def test_huge_ints_are_the_cli_refusal(transfer: rulec.Contract) -> None:
    source = {"account": "A", "country": "DE", "account_age_days": 10**30, "kyc_level": 1}
    with pytest.raises(rulec.InputError, match=r"input.source.account_age_days: 1000000000000000000000000000000 does not fit an int"):
        transfer.evaluate(transfer_input(source=source), channel="server")
    with pytest.raises(rulec.InputError):
        transfer.evaluate(transfer_input(amount=10**5000), channel="server")


def test_deep_nesting_is_refused(transfer: rulec.Contract) -> None:
    deep: list = []
    for _ in range(500):
        deep = [deep]
    with pytest.raises(rulec.InputError, match="nested deeper than 100 levels"):
        transfer.evaluate(transfer_input(tags=deep), channel="server")
    cycle: dict = {}
    cycle["self"] = cycle
    with pytest.raises(rulec.InputError, match="nested deeper"):
        transfer.evaluate(transfer_input(extra=cycle), channel="server")


def test_an_input_that_is_not_a_dict(transfer: rulec.Contract) -> None:
    with pytest.raises(rulec.InputError, match="input: expected"):
        transfer.evaluate([1, 2], channel="server")  # type: ignore[arg-type]


def test_a_contract_that_does_not_compile() -> None:
    with pytest.raises(rulec.CompileError) as failed:
        rulec.compile_text(BROKEN)
    diagnostics = failed.value.diagnostics
    assert len(diagnostics) >= 1
    first = diagnostics[0]
    assert first["code"].startswith("E") and first["file"] == "<contract>"
    assert (first["line"], first["column"]) == (7, 11)
    assert "amonut" in first["message"]
    text = str(failed.value)
    assert text.startswith("<contract>:7:11: error[E0400]: unknown name `amonut`")
    assert "did you mean `amount`?" in text


def test_a_folder_with_a_broken_contract(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    with pytest.raises(rulec.CompileError) as failed:
        rulec.ContractSet(tmp_path)
    assert failed.value.diagnostics[0]["file"].endswith("broken.yaml")


def test_a_damaged_bundle(transfer: rulec.Contract) -> None:
    bundle = transfer.to_bundle()
    with pytest.raises(rulec.BundleError, match="truncated"):
        rulec.load_bundle(bundle[: len(bundle) // 2])
    with pytest.raises(rulec.BundleError):
        rulec.load_bundle(bundle.replace(b'"version"', b'"versiom"', 1))
    with pytest.raises(rulec.BundleError):
        rulec.load_bundle(b"\x00\xff not json")


def test_errors_are_rulec_errors() -> None:
    for error in (rulec.InputError, rulec.CompileError, rulec.BundleError, rulec.UnknownContractError):
        assert issubclass(error, rulec.RulecError)
