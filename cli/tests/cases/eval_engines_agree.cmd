# The reference workload's four requests on each engine: the same lines.
eval benches/data/transfer/acme.payments.transfer.yaml --request benches/data/transfer/bench-requests.ndjson --engine interp
eval benches/data/transfer/acme.payments.transfer.yaml --request benches/data/transfer/bench-requests.ndjson --engine jit
eval benches/data/transfer/acme.payments.transfer.yaml --request benches/data/transfer/bench-requests.ndjson --engine auto
