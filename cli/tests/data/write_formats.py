"""Writes NDJSON records as Parquet or Arrow IPC (pyarrow) or Avro (fastavro) files, as a
user's own tools would, for cli/tests/formats.rs.

    python3 write_formats.py parquet|avro|arrow SCHEMA RECORDS.ndjson OUT CODEC ROWS

SCHEMA names the records' shape (`transfer`: cli/tests/data/records.ndjson,
`numbered`: such records with an `id` first, `typed`: cli/tests/data/typed.ndjson); CODEC is the compression (Parquet:
none, snappy, gzip, zstd, lz4, brotli; Avro: null, deflate, snappy,
zstandard; Arrow: none), and for Parquet and Arrow `-dictionary` after it
(`snappy-dictionary`, `none-dictionary`) dictionary-encodes every string,
inside lists and structs too, as Polars categoricals and Spark's and
pyarrow's dictionary reads give them; ROWS is the rows per Parquet row group, Avro block
or Arrow batch. Absent
fields are nulls; decimals keep their exact digits.
"""

import datetime
import decimal
import json
import re
import sys

DURATION = re.compile(r"^(-?\d+)(ms|us|ns|h|m|s)$")
UNITS = {"h": 3600_000_000, "m": 60_000_000, "s": 1_000_000, "ms": 1000, "us": 1, "ns": 0.001}


def duration(text):
    number, unit = DURATION.match(text).groups()
    return datetime.timedelta(microseconds=int(number) * UNITS[unit])


def timestamp(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def dec(text):
    return decimal.Decimal(text)


def convert(record, fields):
    """The record's values as Python values: `fields` maps a name to a
    converter (None keeps the value, a dict converts a nested record)."""
    out = {}
    for name, how in fields.items():
        value = record.get(name)
        if value is None:
            out[name] = None
        elif isinstance(how, dict):
            out[name] = convert(value, how)
        elif isinstance(how, list):
            out[name] = [how[0](v) if how[0] else v for v in value]
        else:
            out[name] = how(value) if how else value
    return out


TRANSFER = {
    "amount": dec,
    "currency": None,
    "daily_total": dec,
    "source": {"account": None, "country": None, "account_age_days": None, "kyc_level": None},
    "destination": {"country": None, "iban": None, "name": None},
    "purpose": None,
    "tags": [None],
}


NUMBERED = {"id": None, **TRANSFER}


def typed_fields(avro):
    return {
        "id": None,
        "amount": dec,
        "ratio": None,
        "flag": None,
        "at": timestamp,
        # Avro has no duration type: the text, as a string.
        "wait": None if avro else duration,
        "tier": None,
        "names": [None],
        "amounts": [dec],
        "party": {"name": None, "country": None},
        "note": None,
    }


def parquet_schema(name):
    import pyarrow as pa

    money = pa.decimal128(18, 2)
    if name in ("transfer", "numbered"):
        numbered = [("id", pa.int64())] if name == "numbered" else []
        return pa.schema(
            numbered
            + [
                ("amount", money),
                ("currency", pa.dictionary(pa.int32(), pa.string())),
                ("daily_total", money),
                (
                    "source",
                    pa.struct(
                        [
                            ("account", pa.string()),
                            ("country", pa.string()),
                            ("account_age_days", pa.int64()),
                            ("kyc_level", pa.int32()),
                        ]
                    ),
                ),
                ("destination", pa.struct([("country", pa.string()), ("iban", pa.string()), ("name", pa.string())])),
                ("purpose", pa.large_string()),
                ("tags", pa.list_(pa.string())),
            ]
        )
    return pa.schema(
        [
            ("id", pa.int64()),
            ("amount", money),
            ("ratio", pa.float64()),
            ("flag", pa.bool_()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("wait", pa.duration("us")),
            ("tier", pa.dictionary(pa.int8(), pa.string())),
            ("names", pa.list_(pa.string())),
            ("amounts", pa.list_(money)),
            ("party", pa.struct([("name", pa.string()), ("country", pa.string())])),
            ("note", pa.string()),
        ]
    )


def table(schema_name, records):
    import pyarrow as pa

    fields = {"transfer": TRANSFER, "numbered": NUMBERED}.get(schema_name) or typed_fields(avro=False)
    return pa.Table.from_pylist([convert(r, fields) for r in records], schema=parquet_schema(schema_name))


def dictionary_strings(array):
    """`array` with every string in it dictionary-encoded."""
    import pyarrow as pa

    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return array.dictionary_encode()
    if pa.types.is_list(kind):
        values = dictionary_strings(array.values)
        return pa.ListArray.from_arrays(array.offsets, values, mask=array.is_null())
    if pa.types.is_struct(kind):
        children = [dictionary_strings(array.field(i)) for i in range(kind.num_fields)]
        names = [kind.field(i).name for i in range(kind.num_fields)]
        return pa.StructArray.from_arrays(children, names=names, mask=array.is_null())
    return array


def encoded(data, codec):
    """`data` and the codec's compression: `-dictionary` encodes strings."""
    import pyarrow as pa

    if not codec.endswith("-dictionary"):
        return data, codec
    columns = [pa.chunked_array([dictionary_strings(c) for c in column.chunks]) for column in data.columns]
    return pa.Table.from_arrays(columns, names=data.column_names), codec[: -len("-dictionary")]


def write_parquet(schema_name, records, out, codec, rows):
    import pyarrow.parquet as pq

    data, codec = encoded(table(schema_name, records), codec)
    pq.write_table(data, out, compression=codec, row_group_size=rows)


def write_arrow(schema_name, records, out, codec, rows):
    import pyarrow as pa

    data, _ = encoded(table(schema_name, records), codec)
    with pa.OSFile(out, "wb") as sink, pa.ipc.new_file(sink, data.schema) as writer:
        writer.write_table(data, max_chunksize=rows)


def nullable(avro_type):
    return ["null", avro_type]


def avro_schema(name):
    money = {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 2}

    def record(record_name, fields):
        return {
            "type": "record",
            "name": record_name,
            "fields": [{"name": n, "type": nullable(t), "default": None} for n, t in fields],
        }

    if name == "transfer":
        return record(
            "Transfer",
            [
                ("amount", money),
                # A string, not an enum: some records hold a currency the
                # contract refuses, which an Avro enum could not.
                ("currency", "string"),
                ("daily_total", {"type": "fixed", "name": "Money", "size": 9, "logicalType": "decimal", "precision": 18, "scale": 2}),
                ("source", record("Source", [("account", "string"), ("country", "string"), ("account_age_days", "long"), ("kyc_level", "int")])),
                ("destination", record("Destination", [("country", "string"), ("iban", "string"), ("name", "string")])),
                ("purpose", "string"),
                ("tags", {"type": "array", "items": "string"}),
            ],
        )
    return record(
        "Typed",
        [
            ("id", "long"),
            ("amount", money),
            ("ratio", "double"),
            ("flag", "boolean"),
            ("at", {"type": "long", "logicalType": "timestamp-micros"}),
            ("wait", "string"),
            ("tier", {"type": "enum", "name": "Tier", "symbols": ["gold", "silver"]}),
            ("names", {"type": "array", "items": "string"}),
            ("amounts", {"type": "array", "items": money}),
            ("party", record("Party", [("name", "string"), ("country", "string")])),
            ("note", "string"),
        ],
    )


def write_avro(schema_name, records, out, codec, rows):
    import fastavro

    fields = TRANSFER if schema_name == "transfer" else typed_fields(avro=True)
    schema = fastavro.parse_schema(avro_schema(schema_name))
    with open(out, "wb") as f:
        # fastavro ends a block once it holds `sync_interval` bytes: 1 is
        # a block per record, else its default.
        interval = 1 if rows == 1 else 16000
        fastavro.writer(f, schema, [convert(r, fields) for r in records], codec=codec, sync_interval=interval)


def main():
    kind, schema_name, records_path, out, codec, rows = sys.argv[1:]
    with open(records_path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    writer = {"parquet": write_parquet, "avro": write_avro, "arrow": write_arrow}[kind]
    writer(schema_name, records, out, codec, int(rows))


if __name__ == "__main__":
    main()
