# Windows: `rulec eval` over a stream keeps window state from line to line
# (on stdin and from --request), a bundle keeps the windows, and `rulec
# test` runs each case's history: first, on both engines.
eval conformance/cases/windows_span_grace_late/contract.yaml < conformance/cases/windows_span_grace_late/requests.ndjson
compile conformance/cases/windows_span_grace_late/contract.yaml -o $TMP
eval $TMP/conformance.windows.span.bundle.json --engine jit --request conformance/cases/windows_span_grace_late/requests.ndjson
test conformance/cases/windows_span_grace_late/contract.yaml
