SELECT rulec_decision('acme.payments.transfer', 'batch', named_struct('currency', currency, 'source', source))
FROM 'cli/tests/data/records.ndjson';
