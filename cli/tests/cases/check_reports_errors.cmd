check frontend/tests/fixtures/err/unknown_name.yaml
