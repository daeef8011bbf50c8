eval conformance/cases/externs/contract.yaml --engine interp < examples/requests/acme.payments.transfer.ndjson
