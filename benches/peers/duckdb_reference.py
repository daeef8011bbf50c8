"""The reference contract (acme.payments.transfer) as one DuckDB SQL query:
the peer of `rulec bench --batch`.

    python3 duckdb_reference.py INPUT.arrow|INPUT.parquet OUTPUT.arrow [--channel C] [--threads N]
    python3 duckdb_reference.py --compare OUTPUT.arrow RULEC_RESULTS.ndjson

Reads bare transfer records from an Arrow IPC file (through pyarrow) or a
Parquet file (DuckDB's own reader), evaluates the
contract's 14 rules (deny-overrides, default allow) and writes one row per
record, in input order: `decision`, `reasons` and `findings` (lists of
structs, messages built with `||`) and `effects` (a struct of `fee`,
`hold_hours`, `step_up`; null where no rule set one), as an Arrow IPC
file, a batch at a time. `--compare` checks those rows against rulec's
NDJSON results for the same records (decision, reasons, findings and
effects, message for message) and says how many differ. Needs
`python3 -m pip install duckdb pyarrow`.
"""

import argparse
import json
import sys

import duckdb
import pyarrow as pa

QUERY = r"""
WITH lets AS (
  SELECT
    amount, currency, daily_total,
    source.country AS src_country, source.account_age_days AS age_days, source.kyc_level AS kyc_level,
    destination.country AS dst_country, destination.iban AS iban,
    CAST(round(amount * CASE currency WHEN 'EUR' THEN 1 WHEN 'USD' THEN 0.92
                                      WHEN 'GBP' THEN 1.17 WHEN 'CHF' THEN 1.04 END, 2)
         AS DECIMAL(18, 2)) AS amount_eur,
    least(greatest(source.kyc_level, 0), 3) AS level
  FROM input
), limits AS (
  SELECT *,
    CASE level WHEN 0 THEN 250 WHEN 1 THEN 1000 WHEN 2 THEN 10000 ELSE 100000 END AS single_limit,
    CASE level WHEN 0 THEN 500 WHEN 1 THEN 2500 WHEN 2 THEN 25000 ELSE 250000 END AS daily_limit,
    src_country <> dst_country AS cross_border,
    age_days < 30 AS new_account
  FROM lets
), fired AS (
  SELECT *,
    amount <= 0 AS positive_amount,
    amount <> round(amount, 2) AS cent_precision,
    amount_eur > single_limit AS single_limit_rule,
    daily_total + amount_eur > daily_limit AS daily_limit_rule,
    dst_country IN ('IR', 'KP', 'SY', 'CU') AS sanctioned_destination,
    src_country IN ('IR', 'KP', 'SY', 'CU') AS sanctioned_source,
    NOT regexp_full_match(iban, '[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}') AS iban_format,
    cross_border AND kyc_level < 2 AS kyc_cross_border,
    NOT starts_with(iban, dst_country) AS iban_country,
    dst_country IN ('AF', 'MM', 'YE', 'VE') AS high_risk_destination,
    cross_border AND amount_eur > 1000 AS cross_border_review,
    new_account AND amount_eur > 500 AS new_account_large,
    cross_border AS transfer_fee,
    $channel = 'mobile' AND amount_eur > 200 AND NOT (new_account AND amount_eur > 500) AS mobile_step_up
  FROM limits
)
SELECT
  CASE WHEN positive_amount OR cent_precision OR single_limit_rule OR daily_limit_rule
            OR sanctioned_destination OR sanctioned_source OR iban_format OR kyc_cross_border
       THEN 'deny' ELSE 'allow' END AS decision,
  list_filter([
    CASE WHEN positive_amount THEN {'rule': 'positive_amount', 'outcome': 'deny',
      'message': 'Amount must be positive, got ' || amount || ' ' || currency || '.'} END,
    CASE WHEN cent_precision THEN {'rule': 'cent_precision', 'outcome': 'deny',
      'message': 'Amount ' || amount || ' has more than two decimal places.'} END,
    CASE WHEN single_limit_rule THEN {'rule': 'single_limit', 'outcome': 'deny',
      'message': 'Transfer of ' || amount_eur || ' EUR exceeds the single-transfer limit of ' || single_limit
                 || ' EUR for KYC level ' || kyc_level || '.'} END,
    CASE WHEN daily_limit_rule THEN {'rule': 'daily_limit', 'outcome': 'deny',
      'message': 'Daily total would reach ' || (daily_total + amount_eur) || ' EUR, above the daily limit of '
                 || daily_limit || ' EUR.'} END,
    CASE WHEN sanctioned_destination THEN {'rule': 'sanctioned_destination', 'outcome': 'deny',
      'message': 'Transfers to ' || dst_country || ' are not permitted.'} END,
    CASE WHEN sanctioned_source THEN {'rule': 'sanctioned_source', 'outcome': 'deny',
      'message': 'Transfers from ' || src_country || ' are not permitted.'} END,
    CASE WHEN iban_format THEN {'rule': 'iban_format', 'outcome': 'deny',
      'message': 'IBAN ' || iban || ' is malformed.'} END,
    CASE WHEN kyc_cross_border THEN {'rule': 'kyc_cross_border', 'outcome': 'deny',
      'message': 'Cross-border transfers need KYC level 2; the account has level ' || kyc_level || '.'} END
  ], lambda r: r IS NOT NULL) AS reasons,
  list_filter([
    CASE WHEN iban_country THEN {'rule': 'iban_country', 'code': 'IBAN_COUNTRY_MISMATCH', 'severity': 'warning',
      'message': 'IBAN ' || iban || ' is not from ' || dst_country || '.'} END,
    CASE WHEN high_risk_destination THEN {'rule': 'high_risk_destination', 'code': 'HIGH_RISK_COUNTRY',
      'severity': 'high', 'message': dst_country || ' is a high-risk destination.'} END,
    CASE WHEN cross_border_review THEN {'rule': 'cross_border_review', 'code': 'CROSS_BORDER', 'severity': 'warning',
      'message': 'Cross-border transfer of ' || amount_eur || ' EUR to ' || dst_country || '.'} END,
    CASE WHEN new_account_large THEN {'rule': 'new_account_large', 'code': 'NEW_ACCOUNT', 'severity': 'warning',
      'message': 'Account is ' || age_days || ' days old and sends ' || amount_eur || ' EUR.'} END
  ], lambda f: f IS NOT NULL) AS findings,
  {
    'fee': CASE WHEN transfer_fee THEN greatest(CAST(round(amount_eur * 0.015, 2) AS DECIMAL(18, 2)), 2.50) END,
    'hold_hours': CASE WHEN high_risk_destination THEN 48 WHEN cross_border_review THEN 24 END,
    'step_up': CASE WHEN new_account_large OR mobile_step_up THEN true END
  } AS effects
FROM fired
"""


def as_rulec(row):
    """A DuckDB row in the shape of rulec's result (effects set only)."""
    effects = {k: (str(v) if k == "fee" else v) for k, v in row["effects"].items() if v is not None}
    return {
        "decision": row["decision"],
        "reasons": [(r["rule"], r["outcome"], r["message"]) for r in row["reasons"]],
        "findings": [(f["rule"], f["code"], f["severity"], f["message"]) for f in row["findings"]],
        "effects": effects,
    }


def rulec_result(line):
    result = json.loads(line)
    return {
        "decision": result["decision"],
        "reasons": [(r["rule"], r["outcome"], r["message"]) for r in result["reasons"]],
        "findings": [(f["rule"], f["code"], f["severity"], f["message"]) for f in result["findings"]],
        "effects": result["effects"],
    }


def compare(duckdb_results, rulec_results):
    """Prints `agree N` or `differ K of N, first at record I`; 0 when they agree."""
    theirs = pa.ipc.open_file(pa.memory_map(duckdb_results)).read_all().to_pylist()
    with open(rulec_results, encoding="utf-8") as lines:
        ours = [rulec_result(line) for line in lines if line.strip()]
    if len(theirs) != len(ours):
        print(f"differ: {len(theirs)} rows for {len(ours)} results", file=sys.stderr)
        return 1
    differ = [i for i, (a, b) in enumerate(zip(theirs, ours)) if as_rulec(a) != b]
    if differ:
        print(f"differ {len(differ)} of {len(ours)}, first at record {differ[0] + 1}", file=sys.stderr)
        return 1
    print(f"agree {len(ours)}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--channel", default="batch")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.compare:
        return compare(args.input, args.output)
    con = duckdb.connect()
    if args.threads:
        con.execute(f"SET threads = {int(args.threads)}")
    if args.input.endswith(".parquet"):
        # A view cannot take a parameter: the path as a quoted literal.
        path = args.input.replace("'", "''")
        con.execute(f"CREATE VIEW input AS SELECT * FROM read_parquet('{path}')")
    else:
        con.register("input", pa.ipc.open_file(pa.memory_map(args.input)).read_all())
    relation = con.sql(QUERY, params={"channel": args.channel})
    # DuckDB 2 names it to_arrow_reader; 1.x record_batch.
    reader = getattr(relation, "to_arrow_reader", None) or relation.record_batch
    result = reader()
    rows = 0
    with pa.OSFile(args.output, "wb") as sink:
        with pa.ipc.new_file(sink, result.schema) as writer:
            for batch in result:
                writer.write_batch(batch)
                rows += batch.num_rows
    print(f"{rows} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
