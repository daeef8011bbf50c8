eval examples/contracts/acme.payments.transfer.yaml --request examples/requests/acme.payments.transfer.ndjson --explain --engine interp
eval examples/contracts/acme.payments.transfer.yaml --request examples/requests/acme.payments.transfer.ndjson --explain --format json --engine jit
eval cli/tests/data/explain_negated.yaml --request cli/tests/data/explain_negated.ndjson --explain
