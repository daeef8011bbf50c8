compile examples/contracts/acme.payments.transfer.yaml -o $TMP
eval $TMP/acme.payments.transfer.bundle.json --engine interp < examples/requests/acme.payments.transfer.ndjson
