-- The --help example: the decision of each example record.
SELECT currency, rulec_decision('acme.payments.transfer', 'batch', named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, 'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)) AS decision
FROM 'cli/tests/data/records.ndjson';
