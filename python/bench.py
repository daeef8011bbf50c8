"""The Python package's benchmark, printed in the shape of `rulec bench`.

Two parts, each measured side by side in one run (the machine is shared
and noisy: compare the ratios, not figures across runs):

- **requests**: one request at a time on one thread, round-robin over the
  reference workload's four benchmark requests (as `rulec bench` and the
  peers run them): ``py-evaluate`` gives the input as a dict (``Decimal``,
  ``int``, ``str``, nested dicts and lists) and reads the result's
  decision; ``py-evaluate-json`` gives the request's JSON text and gets
  the result line (``Contract.evaluate_json``, as ``e2e-jit``). Evaluations
  per second (median run, range over runs), p50 and p99 of each call
  (nearest rank, timer included), and drift (the p50 of a run's last
  tenth over its first tenth).
- **batch** (with ``--records N``, 0 to skip): the four inputs repeated to
  N records in a pyarrow table, written to an Arrow IPC file; then, in
  alternation, ``rulec eval --input FILE --output OUT.arrow`` as a process
  (``--rulec``) and, in this process, the file read with pyarrow and
  ``Contract.evaluate_batch`` (every core, the GIL released). Wall seconds
  (median, range over runs) and the ratio to the CLI.

    python python/bench.py --seconds 2 --runs 3 --records 1000000 \\
        --rulec target/release/rulec
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

# The package's source folder (`rulec/`, without the extension module)
# sits beside this file: measure the installed package, never the source.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import rulec  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WORKLOAD = REPO / "benches" / "data" / "transfer"
CONTRACT = WORKLOAD / "acme.payments.transfer.yaml"
REQUESTS = WORKLOAD / "bench-requests.ndjson"

Call = Callable[[int], object]


def requests() -> List[Dict[str, Any]]:
    """The benchmark requests, decimals (JSON strings in decimal fields) as `Decimal`."""
    lines = [json.loads(line) for line in REQUESTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for line in lines:
        line["input"] = decimals(line["input"])
    return lines


def decimals(value: Any) -> Any:
    """`value` with the transfer contract's decimal fields as `Decimal`."""
    if isinstance(value, dict):
        return {k: Decimal(v) if k in ("amount", "daily_total") else decimals(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decimals(v) for v in value]
    return value


def targets(contract: rulec.Contract, lines: List[Dict[str, Any]]) -> Dict[str, Call]:
    """Each target: a call evaluating the request at an index."""
    texts = [json.dumps(line, default=str) for line in lines]
    envelopes = [(line["input"], line.get("channel"), line.get("component")) for line in lines]

    def py_evaluate(i: int) -> object:
        value, channel, component = envelopes[i]
        return contract.evaluate(value, channel, component=component).decision

    def py_evaluate_json(i: int) -> object:
        return contract.evaluate_json(texts[i])

    return {"py-evaluate": py_evaluate, "py-evaluate-json": py_evaluate_json}


def measure(call: Call, count: int, seconds: float) -> Tuple[float, List[int]]:
    """Evaluations per second over `seconds`, and each call's nanoseconds."""
    clock = time.perf_counter_ns
    times: List[int] = []
    record = times.append
    i = 0
    start = clock()
    end = start + int(seconds * 1e9)
    now = start
    while now < end:
        call(i % count)
        after = clock()
        record(after - now)
        now = after
        i += 1
    return len(times) / ((now - start) / 1e9), times


def nearest_rank(sorted_ns: List[int], q: float) -> int:
    return sorted_ns[max(0, min(len(sorted_ns) - 1, int(q * len(sorted_ns) + 0.999999) - 1))]


def request_rows(contract: rulec.Contract, args: argparse.Namespace) -> List[Dict[str, Any]]:
    lines = requests()
    rows = []
    for name, call in targets(contract, lines).items():
        measure(call, len(lines), args.warmup)
        runs = [measure(call, len(lines), args.seconds) for _ in range(args.runs)]
        rates = [rate for rate, _ in runs]
        middle = sorted(runs, key=lambda run: run[0])[len(runs) // 2][1]
        tenth = max(1, len(middle) // 10)
        drift = statistics.median(middle[-tenth:]) / statistics.median(middle[:tenth])
        ordered = sorted(middle)
        rows.append({
            "target": name, "evals_per_s": statistics.median(rates), "min": min(rates), "max": max(rates),
            "p50_ns": nearest_rank(ordered, 0.50), "p99_ns": nearest_rank(ordered, 0.99), "drift": drift,
        })
    return rows


def batch_rows(contract: rulec.Contract, args: argparse.Namespace, scratch: Path) -> List[Dict[str, Any]]:
    import pyarrow as pa  # type: ignore[import-untyped]

    inputs = [line["input"] for line in requests()]
    table = pa.Table.from_pylist((inputs * (args.records // len(inputs) + 1))[: args.records])
    source, target = scratch / "records.arrow", scratch / "results.arrow"
    with pa.ipc.new_file(source, table.schema) as writer:
        writer.write_table(table, max_chunksize=65536)
    del table
    cli = [str(args.rulec), "eval", str(CONTRACT), "--input", str(source), "--channel", "server",
           "--output", str(target)]

    def in_python() -> None:
        with pa.memory_map(str(source)) as mapped:
            records = pa.ipc.open_file(mapped).read_all()
        results = contract.evaluate_batch(records, channel="server")
        assert results.num_rows == args.records

    def in_cli() -> None:
        subprocess.run(cli, check=True, stdout=subprocess.DEVNULL)

    timings: Dict[str, List[float]] = {"rulec eval --input": [], "evaluate_batch": []}
    in_python()  # warm-up: the contract's native code, the page cache
    for _ in range(args.runs):
        for name, run in (("rulec eval --input", in_cli), ("evaluate_batch", in_python)):
            start = time.perf_counter()
            run()
            timings[name].append(time.perf_counter() - start)
    cli_median = statistics.median(timings["rulec eval --input"])
    return [
        {"mode": name, "records": args.records, "seconds": statistics.median(runs), "min": min(runs),
         "max": max(runs), "records_per_s": args.records / statistics.median(runs),
         "vs_cli": statistics.median(runs) / cli_median}
        for name, runs in timings.items()
    ]


def rate(value: float) -> str:
    return f"{value / 1e6:.2f}M" if value >= 1e6 else f"{value / 1e3:.0f}K"


def print_text(report: Dict[str, Any]) -> None:
    print(f"python {report['python']}, rulec {report['rulec']}, engine {report['engine']}, {report['cpus']} cores\n")
    print("| target | evals/s | range over runs | p50 | p99 | drift |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in report["requests"]:
        print(f"| {row['target']} | {rate(row['evals_per_s'])} | {rate(row['min'])}-{rate(row['max'])} | "
              f"{row['p50_ns'] / 1000:.2f} µs | {row['p99_ns'] / 1000:.2f} µs | {row['drift']:.2f} |")
    if report["batch"]:
        print("\n| mode | records | seconds | range over runs | records/s | vs rulec eval --input |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for row in report["batch"]:
            print(f"| {row['mode']} | {row['records']} | {row['seconds']:.3f} | {row['min']:.3f}-{row['max']:.3f} | "
                  f"{rate(row['records_per_s'])} | {row['vs_cli']:.2f}x |")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measured run")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per target")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up per target")
    parser.add_argument("--records", type=int, default=0, help="records of the batch part (0: skip it)")
    parser.add_argument("--rulec", type=Path, default=REPO / "target" / "release" / "rulec",
                        help="the rulec binary the batch part runs")
    parser.add_argument("--engine", default="jit", choices=["auto", "jit", "interp"])
    parser.add_argument("--format", default="text", choices=["text", "json"])
    args = parser.parse_args(argv)
    if args.records and not args.rulec.is_file():
        parser.error(f"no rulec binary at {args.rulec} (cargo build --release --bin rulec, or --rulec PATH)")
    contract = rulec.compile(CONTRACT, engine=args.engine)
    report: Dict[str, Any] = {
        "python": sys.version.split()[0], "rulec": rulec.__version__, "engine": args.engine,
        "cpus": os.cpu_count(), "requests": request_rows(contract, args), "batch": [],
    }
    if args.records:
        with tempfile.TemporaryDirectory() as scratch:
            report["batch"] = batch_rows(contract, args, Path(scratch))
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
