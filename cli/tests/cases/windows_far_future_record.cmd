# Windows: a record of another key far in the future (11:00, past the
# hour's span and grace, and 2262) changes nothing of S-1, whose sixth
# transfer within the hour (09:50) is denied by `burst`: in a stream, in
# batch (two threads), and from a bundle on native code. The window
# bounds are flags of `rulec eval`, each refused at 0: with at most five
# records a key, the sixth is turned away and `burst` reads the bound.
eval examples/contracts/acme.payments.velocity.yaml --request cli/tests/data/velocity_far_future.ndjson
eval examples/contracts/acme.payments.velocity.yaml --input cli/tests/data/velocity_far_future_records.ndjson --channel server --threads 2 --fields decision,reasons
compile examples/contracts/acme.payments.velocity.yaml -o $TMP
eval $TMP/acme.payments.velocity.bundle.json --engine jit --max-key-records 5 --request cli/tests/data/velocity_far_future.ndjson
eval examples/contracts/acme.payments.velocity.yaml --max-window-keys 0 --request cli/tests/data/velocity_far_future.ndjson
eval examples/contracts/acme.payments.velocity.yaml --max-key-bytes 0 --request cli/tests/data/velocity_far_future.ndjson
