"""pandas' own values, as a DataFrame's rows hold them: a Timedelta and a
Timestamp keep their nanoseconds, and NaT (pandas' missing value) is an
InputError at its path."""

import datetime
import json

import pandas as pd
import pytest

import rulec
from contracts import LONGER

AT = pd.Timestamp("2026-01-02T03:04:05Z")


@pytest.fixture(scope="module", params=["interp", "jit"])
def longer(request: pytest.FixtureRequest) -> rulec.Contract:
    return rulec.compile_text(LONGER, engine=request.param)


@pytest.mark.parametrize(
    ("d", "expected"),
    [
        (pd.Timedelta(1_000_000_500, unit="ns"), True),
        (pd.Timedelta(1_000_000_000, unit="ns"), False),
        (pd.Timedelta(999_999_999, unit="ns"), False),
        (pd.Timedelta(seconds=1, microseconds=1), True),
    ],
)
def test_a_timedelta_keeps_its_nanoseconds(longer: rulec.Contract, d: pd.Timedelta, expected: bool) -> None:
    assert longer.evaluate({"d": d, "at": AT}).effects["longer"] is expected


def test_a_timedelta_reads_as_its_text_would(longer: rulec.Contract) -> None:
    by_value = longer.evaluate({"d": pd.Timedelta(1_000_000_500, unit="ns"), "at": AT}).to_json()
    by_text = longer.evaluate_json(json.dumps({"input": {"d": "1.0000005s", "at": "2026-01-02T03:04:05Z"}}))
    assert by_value.rstrip("\n") == by_text.rstrip("\n")


@pytest.mark.parametrize(
    "at",
    [
        pd.Timestamp("2026-01-02T03:04:05.123456789Z"),
        pd.Timestamp("2026-01-02T04:04:05.123456789", tz="Europe/Amsterdam"),
        pd.Timestamp("2026-01-02T03:04:05.123456789+00:00").tz_convert(datetime.timezone.utc),
    ],
)
def test_a_timestamp_keeps_its_nanoseconds(longer: rulec.Contract, at: pd.Timestamp) -> None:
    result = longer.evaluate({"d": pd.Timedelta(0), "at": at})
    assert '"at":"2026-01-02T03:04:05.123456789Z"' in result.to_json()


@pytest.mark.parametrize(
    ("input", "path"),
    [
        ({"d": pd.NaT, "at": AT}, "input.d"),
        ({"d": pd.Timedelta(0), "at": pd.NaT}, "input.at"),
    ],
)
def test_nat_is_an_input_error_at_its_path(longer: rulec.Contract, input: dict, path: str) -> None:
    with pytest.raises(rulec.InputError) as refused:
        longer.evaluate(input)
    assert [d["path"] for d in refused.value.details] == [path]
    assert "NaT" in refused.value.details[0]["message"]


def test_nat_as_now_is_an_input_error(longer: rulec.Contract) -> None:
    with pytest.raises(rulec.InputError, match="^now: got NaT") as refused:
        longer.evaluate({"d": pd.Timedelta(0), "at": AT}, now=pd.NaT)
    assert [d["path"] for d in refused.value.details] == ["now"]
