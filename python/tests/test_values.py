"""Values both ways: decimals round-trip exactly (28 digits, negative zero,
scale, exponents), ints, floats, timestamps and durations."""

import datetime
from decimal import Decimal

import pytest

import rulec
from contracts import ECHO

UTC = datetime.timezone.utc
AT = datetime.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


@pytest.fixture(scope="module", params=["interp", "jit"])
def echo(request: pytest.FixtureRequest) -> rulec.Contract:
    return rulec.compile_text(ECHO, engine=request.param)


def evaluate(contract: rulec.Contract, **changes: object) -> rulec.Result:
    value: dict = {
        "price": Decimal("1.50"), "count": 3, "ratio": 0.1, "at": AT,
        "wait": datetime.timedelta(hours=1, microseconds=5), "tags": ["a"], "nested": {},
    }
    value.update(changes)
    return contract.evaluate(value)


@pytest.mark.parametrize(
    "text",
    [
        "1.50", "0.10", "-0", "-0.00", "0", "1234567890123456789012345678", "0.0000000000000000000000000001",
        "-7922816251426433759354395033.5", "79228162514264337593543950335", "1E+2", "1.5E-3", "12.345678901234567890",
    ],
)
def test_decimals_round_trip_exactly(echo: rulec.Contract, text: str) -> None:
    price = Decimal(text)
    result = evaluate(echo, price=price)
    back = result.effects["price"]
    assert isinstance(back, Decimal)
    assert back == price
    assert back == Decimal(result.to_json().split('"price":"')[1].split('"')[0])
    if price != 0 and price.as_tuple().exponent <= 0:  # type: ignore[operator]
        assert back.as_tuple() == price.as_tuple(), "digits and scale are kept"


@pytest.mark.parametrize("text", ["-0", "-0.00", "-0E-5"])
def test_negative_zero_comes_back_as_the_cli_prints_it(echo: rulec.Contract, text: str) -> None:
    """The runtime's decimals have no negative zero: `-0.00` is `0.00`."""
    result = evaluate(echo, price=Decimal(text))
    back = result.effects["price"]
    assert back == 0 and not back.is_signed()
    assert back.as_tuple().exponent == Decimal(text).as_tuple().exponent
    assert f'"price":"{back}"' in result.to_json()


def test_decimal_arithmetic_is_exact(echo: rulec.Contract) -> None:
    assert evaluate(echo, price=Decimal("0.1")).effects["doubled"] == Decimal("0.2")


def test_a_decimal_too_large_is_refused_with_its_path(echo: rulec.Contract) -> None:
    with pytest.raises(rulec.InputError) as refused:
        evaluate(echo, price=Decimal("1E+40"))
    assert refused.value.details[0]["path"] == "input.price"


def test_ints_floats_and_times(echo: rulec.Contract) -> None:
    effects = evaluate(echo, count=-(2**63), ratio=1e300).effects
    assert effects["count"] == -(2**63) and isinstance(effects["count"], int)
    assert effects["ratio"] == 1e300
    assert effects["at"] == AT
    assert effects["wait"] == datetime.timedelta(hours=1, microseconds=5)


def test_an_offset_is_kept_as_the_same_instant(echo: rulec.Contract) -> None:
    plus_two = AT.astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    assert evaluate(echo, at=plus_two).effects["at"] == AT


def test_floats_into_decimals_read_their_shortest_text(echo: rulec.Contract) -> None:
    assert evaluate(echo, price=0.1).effects["price"] == Decimal("0.1")


def test_an_int_is_a_decimal_with_scale_zero(echo: rulec.Contract) -> None:
    assert str(evaluate(echo, price=7).effects["price"]) == "7"


def test_tuples_are_lists(echo: rulec.Contract) -> None:
    assert evaluate(echo, tags=("a", "b")).decision == "allow"


class Loud(int):
    """An int whose text is not its digits."""

    def __str__(self) -> str:
        return '1, "count": 2'


class Slanted(datetime.datetime):
    """A datetime whose ISO text would close the JSON string around it."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return '2026-01-01T00:00:00Z", "count": "2'


def test_subclasses_cannot_change_the_json_around_them(echo: rulec.Contract) -> None:
    with pytest.raises(rulec.InputError) as refused:
        evaluate(echo, price=Loud(2**70))
    assert refused.value.details[0]["path"] == "input.price"
    assert "an int whose text is not a number" in refused.value.details[0]["message"]
    with pytest.raises(rulec.InputError) as refused:
        evaluate(echo, at=Slanted(2026, 1, 1, tzinfo=UTC))
    assert [d["path"] for d in refused.value.details] == ["input.at"]


class NanoTimedelta(datetime.timedelta):
    """As pandas.Timedelta: a timedelta that keeps the nanoseconds past its
    microseconds in `nanoseconds`."""

    nanoseconds = 500


def test_nanoseconds_past_the_microseconds_are_kept(echo: rulec.Contract) -> None:
    """1,000,000,500 ns read as 1 s made `d > duration("1s")` false."""
    import json

    value = {
        "price": "1.50", "count": 3, "ratio": 0.1, "at": AT.isoformat(), "wait": "1000000500ns", "tags": ["a"],
        "nested": {},
    }
    from_text = echo.evaluate_json(json.dumps({"input": value})).rstrip("\n")
    assert evaluate(echo, wait=NanoTimedelta(seconds=1)).to_json().rstrip("\n") == from_text
    assert evaluate(echo, wait=datetime.timedelta(seconds=1)).to_json().rstrip("\n") != from_text
