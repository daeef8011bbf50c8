# `rulec test --coverage`: the known gaps of cli/tests/data/coverage.yaml,
# as text, JSON and lcov; measured by the interpreter, native code's fired
# rules checked against it; a contract with windows runs interpreted.
test --coverage cli/tests/data/coverage.yaml
test --coverage --coverage-format json --coverage-output $TMP/coverage.json cli/tests/data/coverage.yaml
% show $TMP/coverage.json
test --coverage --coverage-format lcov --coverage-output $TMP/coverage.lcov cli/tests/data/coverage.yaml
% show $TMP/coverage.lcov
test --coverage conformance/cases/windows_over_lets/contract.yaml
test --coverage-format json cli/tests/data/coverage.yaml
test --coverage cli/tests/data/coverage_short_circuit.yaml
test --coverage --coverage-format lcov cli/tests/data/coverage_short_circuit.yaml
