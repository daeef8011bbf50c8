SELECT rulec_decision('acme.payments.transfer', 'batch', named_struct('amount', CAST(amount AS DOUBLE), 'currency', currency, 'daily_total', daily_total, 'source', source, 'destination', destination))
FROM 'cli/tests/data/records.ndjson';
