# A contract without channels runs in batch mode without --channel; a
# channel it does not declare is refused. A contract that declares
# channels needs --channel: one message naming them, before any input is
# read (the input file here does not exist).
eval cli/tests/data/no_channels.yaml --input cli/tests/data/no_channels.ndjson --engine interp
eval cli/tests/data/no_channels.yaml --input cli/tests/data/no_channels.ndjson --channel server --engine interp
eval examples/contracts/acme.payments.transfer.yaml --input no/such/records.ndjson --engine interp
eval examples/contracts/acme.payments.transfer.yaml --input no/such/records.arrow --engine interp
# --channel is for batch mode only: requests carry their own.
eval examples/contracts/acme.payments.transfer.yaml --channel server --request examples/requests/acme.payments.transfer.ndjson
eval examples/contracts/acme.payments.transfer.yaml --output $TMP/out.ndjson --request examples/requests/acme.payments.transfer.ndjson
