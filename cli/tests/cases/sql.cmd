# rulec sql, the query on stdin: results as a table, then each call that
# does not plan (exit 1, the message naming what is wrong), a query that
# does not parse, a file that is not there, and a contract that does not
# compile (its diagnostics as `rulec check` prints them).
sql --contracts examples/contracts/acme.payments.transfer.yaml < cli/tests/data/sql/decisions.sql
sql --contracts examples/contracts/ --format csv < cli/tests/data/sql/grouped.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/unknown_contract.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/unknown_channel.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/null_channel.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/contract_not_literal.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/channel_not_literal.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/missing_field.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/wrong_type.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/float_for_decimal.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/record_not_struct.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/windows.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/bad_sql.sql
sql --contracts examples/contracts/ < cli/tests/data/sql/missing_file.sql
sql --contracts frontend/tests/fixtures/err/E0400_unknown_name.yaml < cli/tests/data/sql/decisions.sql
sql --file cli/tests/data/sql/no_such.sql
