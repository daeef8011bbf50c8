SELECT rulec_decision('acme.payments.velocity', 'batch', named_struct('amount', amount))
FROM 'cli/tests/data/records.ndjson';
