check frontend/tests/fixtures/err/E0400_unknown_name.yaml
