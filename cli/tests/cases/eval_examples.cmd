eval examples/contracts/ --request examples/requests/acme.payments.transfer.ndjson --engine interp
eval examples/contracts/ --request examples/requests/shop.orders.check.ndjson --engine interp
eval examples/contracts/ --request examples/requests/acme.payments.velocity.ndjson --engine interp
