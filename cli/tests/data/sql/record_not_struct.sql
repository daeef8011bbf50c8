SELECT rulec_decision('acme.payments.transfer', 'batch', amount)
FROM 'cli/tests/data/records.ndjson';
