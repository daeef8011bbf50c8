"""Shared fixtures: the repository's folders and the example contract."""

from pathlib import Path

import pytest

import rulec

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CONFORMANCE = REPO / "conformance"
TRANSFER_YAML = EXAMPLES / "contracts" / "acme.payments.transfer.yaml"


def rulec_binary() -> "Path | None":
    """The built `rulec` CLI: `$RULEC_BIN`, or cargo's debug build."""
    import os

    candidates = [os.environ.get("RULEC_BIN")]
    candidates.append(os.path.join(os.environ.get("CARGO_TARGET_DIR", str(REPO / "target")), "debug", "rulec"))
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def transfer() -> rulec.Contract:
    """The example transfer contract, interpreted and native alike."""
    return rulec.compile(TRANSFER_YAML)


def transfer_input(**changes: object) -> dict:
    """A valid input of the transfer contract, with `changes` applied."""
    from decimal import Decimal

    value: dict = {
        "amount": Decimal("120.00"),
        "currency": "EUR",
        "daily_total": Decimal("300.00"),
        "source": {"account": "A-1001", "country": "DE", "account_age_days": 400, "kyc_level": 1},
        "destination": {"country": "DE", "iban": "DE89370400440532013000", "name": "Bäckerei Schulz"},
        "tags": [],
    }
    value.update(changes)
    return value
