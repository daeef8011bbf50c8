compile examples/contracts/acme.payments.transfer.yaml -o $TMP
% truncate $TMP/acme.payments.transfer.bundle.json 2000
inspect $TMP/acme.payments.transfer.bundle.json --emit ir
