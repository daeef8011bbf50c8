"""Quickstart: compile a contract, evaluate one transfer, read the result."""

from decimal import Decimal

import rulec

contract = rulec.compile("examples/contracts/acme.payments.transfer.yaml")
transfer = {
    "amount": Decimal("120.00"), "currency": "EUR", "daily_total": Decimal("300.00"),
    "source": {"account": "A-1001", "country": "DE", "account_age_days": 400, "kyc_level": 1},
    "destination": {"country": "DE", "iban": "DE89370400440532013000", "name": "Bäckerei Schulz"},
    "tags": [],
}
result = contract.evaluate(transfer, channel="server")
print(result.decision, [r["rule"] for r in result.reasons], result.effects)
print(result.to_json())  # the line `rulec eval` prints for this request
