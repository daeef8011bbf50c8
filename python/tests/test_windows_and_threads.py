"""State and concurrency: a contract's windows keep their state across
calls (as over one `rulec eval` stream) and per object; two threads
evaluate one contract at once with the results of one thread."""

import json
import threading
from decimal import Decimal
from typing import List

import rulec
from conftest import CONFORMANCE, transfer_input

SEVERAL_KEYS = CONFORMANCE / "cases" / "windows_several_keys"


def requests() -> List[dict]:
    lines = (SEVERAL_KEYS / "requests.ndjson").read_text(encoding="utf-8").splitlines()
    return [json.loads(line, parse_float=Decimal) for line in lines if line.strip()]


def test_windows_count_over_a_stream_of_calls() -> None:
    contract = rulec.compile(SEVERAL_KEYS / "contract.yaml")
    counts = [contract.evaluate(r["input"]).effects.get("by_account") for r in requests()]
    assert counts[:7] == [1, 2, 1, 1, 3, 3, 1]


def test_the_stream_of_calls_gives_the_lines_of_one_stream() -> None:
    contract = rulec.compile(SEVERAL_KEYS / "contract.yaml")
    stream = rulec.ContractSet(SEVERAL_KEYS / "contract.yaml")
    for request in requests():
        expected = stream.evaluate_line(json.dumps({"input": request["input"]}, default=str))
        assert contract.evaluate(request["input"]).to_json() == expected


def test_each_contract_object_has_its_own_state() -> None:
    first = rulec.compile(SEVERAL_KEYS / "contract.yaml")
    second = rulec.compile(SEVERAL_KEYS / "contract.yaml")
    record = requests()[0]["input"]
    assert first.evaluate(record).effects["by_account"] == 1
    assert first.evaluate(record).effects["by_account"] == 2
    assert second.evaluate(record).effects["by_account"] == 1


def test_two_threads_share_one_contract(transfer: rulec.Contract) -> None:
    inputs = [transfer_input(amount=Decimal(n)) for n in range(-5, 3000, 7)]
    expected = [transfer.evaluate(i, channel="server").to_json() for i in inputs]
    failures: List[str] = []

    def run() -> None:
        for _ in range(20):
            got = [transfer.evaluate(i, channel="server").to_json() for i in inputs]
            if got != expected:
                failures.append("results differ")

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_the_gil_is_released_while_evaluating(transfer: rulec.Contract) -> None:
    """Another thread makes progress while one evaluates in a loop."""
    ticks = 0
    done = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    ticker = threading.Thread(target=tick)
    ticker.start()
    for _ in range(2000):
        transfer.evaluate(transfer_input(), channel="server")
    done.set()
    ticker.join()
    assert ticks > 0
