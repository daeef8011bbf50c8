compile examples/contracts/acme.payments.transfer.yaml -o $TMP
% replace $TMP/acme.payments.transfer.bundle.json 0.92 0.93
inspect $TMP/acme.payments.transfer.bundle.json --emit ir
inspect $TMP/acme.payments.transfer.bundle.json --emit ast
