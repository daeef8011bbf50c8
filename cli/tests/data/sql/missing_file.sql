SELECT * FROM 'cli/tests/data/no_such_file.parquet';
