check --format json frontend/tests/fixtures/err/unknown_name.yaml
