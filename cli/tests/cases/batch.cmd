# Bare input records, one per line, on one channel; results in input order.
eval examples/contracts/acme.payments.transfer.yaml --input cli/tests/data/records.ndjson --channel server --engine interp --threads 2
eval examples/contracts/acme.payments.transfer.yaml --input cli/tests/data/records.ndjson --channel server --engine interp --output $TMP/out.ndjson
% show $TMP/out.ndjson
eval examples/contracts/acme.payments.transfer.yaml --input cli/tests/data/records.ndjson --channel fax --engine interp
