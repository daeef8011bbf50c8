# Invalid lines print their error and the rest go on; the exit code is 1.
eval examples/contracts/acme.payments.transfer.yaml --request cli/tests/data/mixed.ndjson --engine interp
