SELECT rulec_decision('acme.payments.transfer', 'batch', named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, 'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)
FROM 'cli/tests/data/records.ndjson';
