"""Writes the NDJSON records of cli/tests/data/vectors.ndjson as Parquet or
Arrow IPC with pyarrow, their embeddings in one Arrow list layout, for
cli/tests/vectors_batch.rs.

    python3 write_vectors.py parquet|arrow LAYOUT RECORDS.ndjson OUT

LAYOUT is the embedding column's type: fixed32 and fixed64
(FixedSizeList<Float32|Float64> of 4; records of another length are
left out), list64 (List<Float64>), large32 (LargeList<Float32>) or list16
(List<Float16>). `profile` is always a List<Float64>; absent fields are
nulls, and so is a null element.
"""

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

WIDTH = 4

ELEMENTS = {
    "fixed32": pa.float32(),
    "fixed64": pa.float64(),
    "list64": pa.float64(),
    "large32": pa.float32(),
    "list16": pa.float16(),
}


def embedding_type(layout):
    element = ELEMENTS[layout]
    if layout.startswith("fixed"):
        return pa.list_(element, WIDTH)
    if layout.startswith("large"):
        return pa.large_list(element)
    return pa.list_(element)


def embedding_array(layout, values):
    if layout == "list16":
        # Built as floats and cast: pyarrow makes half floats from numpy's
        # only, and every value here is exact in half precision.
        return pa.array(values, type=pa.list_(pa.float32())).cast(embedding_type(layout))
    return pa.array(values, type=embedding_type(layout))


def main():
    kind, layout, records_path, out = sys.argv[1:]
    with open(records_path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    if layout.startswith("fixed"):
        records = [r for r in records if len(r["embedding"]) == WIDTH]
    table = pa.table(
        {
            "id": pa.array([r["id"] for r in records], type=pa.int64()),
            "embedding": embedding_array(layout, [r["embedding"] for r in records]),
            "profile": pa.array([r.get("profile") for r in records], type=pa.list_(pa.float64())),
        }
    )
    if kind == "parquet":
        pq.write_table(table, out, row_group_size=3)
    else:
        with pa.OSFile(out, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=4):
                writer.write_batch(batch)


if __name__ == "__main__":
    main()
