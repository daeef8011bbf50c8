"""Arrow data from other libraries, as a hostile or careless producer hands
it over: batches that lie about their stream's schema, data that is not
valid Arrow, a reader that raises, dictionaries of every string type
(polars categoricals and enums), and a stream too large to hold, which is
evaluated a chunk at a time."""

from typing import Any, Iterator, List

import pytest

import rulec

pa = pytest.importorskip("pyarrow")

CONTRACT = """\
contract: t.arrow_data
version: 1.0.0
decision: deny-overrides
default: allow
input:
  amount: int
  currency: { enum: [EUR, USD] }
rules:
  - id: big
    when: amount > 100
    deny: "Amount {amount} {currency} is too big."
"""


@pytest.fixture(scope="module")
def contract() -> rulec.Contract:
    return rulec.compile_text(CONTRACT)


def decisions(results: Any) -> List[str]:
    return [row["decision"] for row in results.to_pylist()]


class CapsuleOnly:
    """A producer that speaks only the C stream interface."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.reader.__arrow_c_stream__(requested_schema)


def lying_reader(schema: Any, batch: Any) -> Any:
    return pa.RecordBatchReader.from_batches(schema, [batch])


def test_a_batch_narrower_than_its_schema_is_refused(contract: rulec.Contract) -> None:
    """An int8 column under an int64 schema: reading it as int64 would read
    past its buffer; pyarrow's `read_all` refuses it, and so does rulec."""
    schema = pa.schema([("amount", pa.int64()), ("currency", pa.string())])
    batch = pa.record_batch([pa.array([1, 120, 3] * 1000, pa.int8()), pa.array(["EUR"] * 3000)],
                            names=["amount", "currency"])
    with pytest.raises(rulec.InputError, match=r"batch 0 of the stream does not match the stream's schema: "
                                               r"its column `amount` is Int8, where the schema has `amount` as Int64"):
        contract.evaluate_batch(lying_reader(schema, batch))


@pytest.mark.parametrize("wrap", [lambda r: r, CapsuleOnly], ids=["reader", "c-stream"])
def test_a_batch_with_another_column_count_is_refused(contract: rulec.Contract, wrap: Any) -> None:
    schema = pa.schema([("amount", pa.int64()), ("currency", pa.string())])
    batch = pa.record_batch([pa.array([1, 2], pa.int64())], names=["amount"])
    with pytest.raises(rulec.InputError, match="batch 0 of the"):
        contract.evaluate_batch(wrap(lying_reader(schema, batch)))


def test_a_dictionary_whose_keys_exceed_its_values_is_refused(contract: rulec.Contract) -> None:
    currency = pa.DictionaryArray.from_arrays(pa.array([0, 7], pa.int32()), pa.array(["EUR"]), safe=False)
    table = pa.table({"amount": pa.array([1, 2], pa.int64()), "currency": currency})
    with pytest.raises(rulec.InputError, match="is not valid"):
        contract.evaluate_batch(table)


def test_an_exception_from_the_reader_passes_through(contract: rulec.Contract) -> None:
    schema = pa.schema([("amount", pa.int64()), ("currency", pa.string())])

    def batches() -> Iterator[Any]:
        yield pa.record_batch([pa.array([1], pa.int64()), pa.array(["EUR"])], schema=schema)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        contract.evaluate_batch(pa.RecordBatchReader.from_batches(schema, batches()))


def plain() -> Any:
    return pa.table({"amount": pa.array([1, 200, 3, 400], pa.int64()),
                     "currency": pa.array(["EUR", "USD", "EUR", "GBP"])})


@pytest.mark.parametrize("value_type", [pa.string(), pa.large_string(), pa.string_view()])
@pytest.mark.parametrize("index_type", [pa.int8(), pa.int32(), pa.uint32()])
def test_dictionaries_of_every_string_type(contract: rulec.Contract, value_type: Any, index_type: Any) -> None:
    table = plain()
    currency = table.column("currency").cast(value_type).dictionary_encode()
    currency = currency.cast(pa.dictionary(index_type, value_type))
    encoded = table.set_column(1, "currency", currency)
    expected = contract.evaluate_batch(table)
    assert contract.evaluate_batch(encoded).equals(expected)
    assert decisions(expected)[:3] == ["allow", "deny", "allow"]


def test_polars_categoricals_and_enums(contract: rulec.Contract) -> None:
    pl = pytest.importorskip("polars")
    expected = contract.evaluate_batch(plain())
    frame = pl.from_arrow(plain())
    for dtype in (pl.Categorical, pl.Enum(["EUR", "USD", "GBP"])):
        encoded = frame.with_columns(pl.col("currency").cast(dtype))
        assert contract.evaluate_batch(encoded).equals(expected), dtype


def test_a_stream_is_evaluated_a_chunk_at_a_time(contract: rulec.Contract) -> None:
    """A reader of 400 batches of 1 MiB each (400 MiB in all): what pyarrow
    holds at any time stays a few chunks, so the stream is never read
    whole."""
    rows = 131072  # 1 MiB of amounts a batch
    held: List[int] = []

    def batches() -> Iterator[Any]:
        for i in range(400):
            held.append(pa.total_allocated_bytes())
            yield pa.record_batch([pa.array(range(i, i + rows), pa.int64()),
                                   pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int8()), ["EUR"])],
                                  schema=schema)

    schema = pa.schema([("amount", pa.int64()), ("currency", pa.dictionary(pa.int8(), pa.string()))])
    results = contract.evaluate_batch(pa.RecordBatchReader.from_batches(schema, batches()),
                                      fields="decision")
    assert results.num_rows == 400 * rows
    assert max(held) < 64 << 20, f"pyarrow held {max(held) >> 20} MiB at once"


def test_many_small_batches_are_gathered(contract: rulec.Contract) -> None:
    """100,000 one-row batches give the same results as one batch."""
    table = pa.table({"amount": pa.array(range(100_000), pa.int64()), "currency": pa.array(["EUR"] * 100_000)})
    whole = contract.evaluate_batch(table, fields="decision")
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=1))
    assert contract.evaluate_batch(reader, fields="decision").equals(whole)
