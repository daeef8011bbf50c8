compile examples/contracts/ -o $TMP
inspect $TMP/acme.payments.transfer.bundle.json --emit ir
