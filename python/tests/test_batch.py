"""`Contract.evaluate_batch` over Arrow data (pyarrow tables, record
batches, readers, a DuckDB result, a polars frame) and over a list of
dicts: each row's result is the result of
the same record evaluated alone (the CLI's line), windows see records in
order, and data that does not fit is refused."""

import json
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, List

import pytest

import rulec
from conftest import CONFORMANCE, EXAMPLES, rulec_binary

pa = pytest.importorskip("pyarrow")

REQUESTS = EXAMPLES / "requests" / "acme.payments.transfer.ndjson"


def server_records() -> List[Dict[str, Any]]:
    """The example requests on the `server` channel without a component."""
    lines = [json.loads(line) for line in REQUESTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["input"] for r in lines if r.get("channel") == "server" and "component" not in r]


def as_line(row: Dict[str, Any]) -> Dict[str, Any]:
    """An Arrow result row in the JSON line's form (unset effects left out)."""
    effects = {k: (str(v) if isinstance(v, Decimal) else v) for k, v in row["effects"].items() if v is not None}
    return {
        "decision": row["decision"], "reasons": row["reasons"], "findings": row["findings"],
        "effects": effects, "errors": row["errors"],
    }


def expected_lines(contract: rulec.Contract, records: List[Dict[str, Any]], channel: str) -> List[Dict[str, Any]]:
    out = []
    for record in records:
        line = json.loads(contract.evaluate_json(json.dumps({"channel": channel, "input": record})))
        out.append({k: line[k] for k in ("decision", "reasons", "findings", "effects", "errors")})
    return out


def test_a_table_gives_each_record_s_result(transfer: rulec.Contract) -> None:
    records = server_records() * 50
    table = pa.Table.from_pylist(records)
    results = transfer.evaluate_batch(table, channel="server")
    assert isinstance(results, pa.Table) and results.num_rows == len(records)
    assert results.column_names == ["decision", "reasons", "findings", "effects", "errors", "error"]
    rows = results.to_pylist()
    assert all(row["error"] is None for row in rows)
    assert [as_line(row) for row in rows] == expected_lines(transfer, records, "server")


def test_batches_readers_and_many_chunks(transfer: rulec.Contract) -> None:
    records = server_records() * 5000
    table = pa.Table.from_pylist(records)
    whole = transfer.evaluate_batch(table, channel="server")
    from_reader = transfer.evaluate_batch(pa.RecordBatchReader.from_batches(table.schema, table.to_batches(7000)), channel="server")
    from_batch = transfer.evaluate_batch(table.combine_chunks().to_batches()[0], channel="server")
    assert whole.equals(from_reader) and whole.equals(from_batch)


def test_a_duckdb_result(transfer: rulec.Contract) -> None:
    duckdb = pytest.importorskip("duckdb")
    transfers = pa.Table.from_pylist(server_records())
    relation = duckdb.sql("SELECT * FROM transfers")
    results = transfer.evaluate_batch(relation, channel="server")
    assert results.equals(transfer.evaluate_batch(transfers, channel="server"))


def test_a_polars_frame(transfer: rulec.Contract) -> None:
    """polars hands over its own types (string views, large lists)."""
    pl = pytest.importorskip("polars")
    table = pa.Table.from_pylist(server_records() * 20)
    frame = pl.from_arrow(table)
    assert transfer.evaluate_batch(frame, channel="server").equals(transfer.evaluate_batch(table, channel="server"))


def test_a_list_of_dicts_gives_a_list_of_dicts(transfer: rulec.Contract) -> None:
    records = server_records()
    results = transfer.evaluate_batch(records, channel="server")
    assert results == [transfer.evaluate(record, channel="server").to_dict() for record in records]
    kept = transfer.evaluate_batch(records, channel="server", fields="decision,effects")
    assert [list(r) for r in kept] == [["contract", "version", "decision", "effects"]] * len(records)
    assert transfer.evaluate_batch([], channel="server") == []


def test_a_list_with_a_bad_record_is_refused_before_any_is_evaluated() -> None:
    case = CONFORMANCE / "cases" / "windows_several_keys"
    record = {"at": "2026-01-01T00:00:00Z", "account": "A1", "country": "DE", "device": 1, "kind": "card"}
    refused, fresh = rulec.compile(case / "contract.yaml"), rulec.compile(case / "contract.yaml")
    with pytest.raises(rulec.InputError, match=r"^record 2: ") as raised:
        refused.evaluate_batch([record, record, {**record, "device": "one"}])
    assert raised.value.record == 2
    assert raised.value.details[0]["path"] == "input.device"
    # The windows saw none of the refused batch's records.
    assert refused.evaluate_batch([record]) == fresh.evaluate_batch([record])


def test_fields_keep_only_some_parts(transfer: rulec.Contract) -> None:
    table = pa.Table.from_pylist(server_records())
    assert transfer.evaluate_batch(table, channel="server", fields="decision").column_names == ["decision", "error"]
    names = transfer.evaluate_batch(table, channel="server", fields=["decision", "effects"]).column_names
    assert names == ["decision", "effects", "error"]
    with pytest.raises(ValueError, match="unknown part"):
        transfer.evaluate_batch(table, channel="server", fields="decisions")


def test_an_invalid_record_has_its_error_row(transfer: rulec.Contract) -> None:
    records = server_records()[:2]
    records[1] = {**records[1], "amount": "12,5"}
    rows = transfer.evaluate_batch(pa.Table.from_pylist(records), channel="server").to_pylist()
    assert rows[0]["error"] is None and rows[1]["decision"] is None
    assert rows[1]["error"]["kind"] == "invalid_input"
    assert rows[1]["error"]["details"][0]["path"] == "input.amount"


def test_data_that_does_not_fit_is_refused(transfer: rulec.Contract) -> None:
    table = pa.Table.from_pylist(server_records())
    with pytest.raises(rulec.InputError, match="channel"):
        transfer.evaluate_batch(table)
    with pytest.raises(rulec.InputError, match="amount"):
        transfer.evaluate_batch(table.set_column(0, "amount", pa.array([True] * table.num_rows)), channel="server")
    with pytest.raises(TypeError, match="expected Arrow data"):
        transfer.evaluate_batch({"amount": 1}, channel="server")


def test_windows_see_the_records_in_order() -> None:
    """20,000 records (several chunks, on every core) enter the windows in
    input order: the counts are those of one record at a time."""
    import datetime

    case = CONFORMANCE / "cases" / "windows_several_keys"
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    records = [
        {"at": (start + datetime.timedelta(seconds=37 * i)).isoformat(), "account": f"A{i % 7}",
         "country": ["DE", "FR", "IT"][i % 3], "device": i % 5, "kind": ["card", "wire"][i % 2]}
        for i in range(20_000)
    ]
    in_batch = rulec.compile(case / "contract.yaml")
    one_by_one = rulec.compile(case / "contract.yaml")
    rows = in_batch.evaluate_batch(pa.Table.from_pylist(records)).to_pylist()
    expected = [json.loads(one_by_one.evaluate_json(json.dumps({"input": r})))["effects"] for r in records]
    got = [{k: v for k, v in row["effects"].items() if v is not None} for row in rows]
    assert got == expected


def test_the_cli_writes_the_same_table(tmp_path: Path, transfer: rulec.Contract) -> None:
    binary = rulec_binary()
    if binary is None:
        pytest.skip("no rulec binary (cargo build -p cli, or RULEC_BIN)")
    table = pa.Table.from_pylist(server_records() * 100)
    source, target = tmp_path / "records.arrow", tmp_path / "results.arrow"
    with pa.ipc.new_file(source, table.schema) as writer:
        writer.write_table(table)
    subprocess.run(
        [str(binary), "eval", str(EXAMPLES / "contracts" / "acme.payments.transfer.yaml"), "--input", str(source),
         "--channel", "server", "--output", str(target)],
        check=True, capture_output=True,
    )
    with pa.ipc.open_file(target) as reader:
        printed = reader.read_all()
    assert transfer.evaluate_batch(table, channel="server").equals(printed)
