"""Writes a conformance case's requests as a Parquet file the way a data
team's pyarrow code would (types inferred from the values), for
cli/tests/sql.rs.

    python3 write_inferred_parquet.py REQUESTS.ndjson OUT.parquet

Each request's `input` object is a row, after an `id` column (the line's
index). Prints the input's column names, one per line. Exits 1 (with the
reason on stderr) when the records do not make one table: pyarrow finds
no type for a column whose values differ in kind (a decimal written as a
string on one line and a number on another), or a request's input is not
an object.
"""

import json
import sys


def main():
    import pyarrow as pa
    import pyarrow.parquet as pq

    requests_path, out = sys.argv[1], sys.argv[2]
    rows = []
    with open(requests_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            request = json.loads(line)
            record = request.get("input")
            if not isinstance(record, dict):
                sys.exit("a request's input is not an object")
            rows.append({"id": len(rows), **record})
    names = []
    for row in rows:
        names.extend(n for n in row if n not in names)
    try:
        table = pa.Table.from_pylist([{n: row.get(n) for n in names} for row in rows])
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        sys.exit(f"pyarrow infers no table: {e}")
    pq.write_table(table, out)
    for name in names[1:]:
        print(name)


if __name__ == "__main__":
    main()
