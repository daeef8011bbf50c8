-- A part of the result, grouped.
SELECT rulec('acme.payments.transfer', 'batch', named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, 'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags))['decision'] AS decision, count(*) AS n
FROM 'cli/tests/data/records.ndjson' GROUP BY decision ORDER BY decision;
