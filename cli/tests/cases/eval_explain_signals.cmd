# --explain shows the window aggregates and scores each rule it evaluated
# read (its condition and its lets), over a stream whose windows fill up;
# a score over a lambda's parameter has no single value and is not shown.
eval examples/contracts/acme.payments.velocity.yaml --request examples/requests/acme.payments.velocity.ndjson --explain --engine interp
eval conformance/cases/models_score/contract.yaml --request conformance/cases/models_score/requests.ndjson --explain --engine jit
