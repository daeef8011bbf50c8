check no/such/file.yaml
check
