inspect examples/contracts/acme.payments.transfer.yaml --emit ast
