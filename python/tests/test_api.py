"""The API's shapes: compiling from a path, a PathLike or the text, bundles
from bytes and paths, routing in a set, the result's parts and dict."""

import json
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

import rulec
from conftest import EXAMPLES, TRANSFER_YAML, rulec_binary, transfer_input


def test_compile_from_a_path_a_pathlike_and_the_text() -> None:
    by_str = rulec.compile(str(TRANSFER_YAML))
    by_path = rulec.compile(TRANSFER_YAML)
    by_text = rulec.compile_text(TRANSFER_YAML.read_text(encoding="utf-8"))
    assert by_str.name == by_path.name == by_text.name == "acme.payments.transfer"
    assert by_str.hash == by_path.hash == by_text.hash
    assert by_text.version == "1.0.0"


def test_a_missing_file_is_an_os_error() -> None:
    with pytest.raises(FileNotFoundError, match="cannot read"):
        rulec.compile("no/such/contract.yaml")


SECRETS = "root:x:0:0:root:/root:/bin/bash\nservice:hunter2:1:1\n"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (SECRETS, "E0100"),  # one value, as /etc/passwd reads
        ("password: hunter2\ntoken: abc123\n", None),  # a mapping that is no contract
        ("key: [hunter2\n", "E0001"),  # not YAML
    ],
)
def test_a_file_that_is_not_a_contract_is_not_quoted(tmp_path: Path, content: str, code: "str | None") -> None:
    path = tmp_path / "secrets"
    path.write_text(content, encoding="utf-8")
    for load in (rulec.compile, rulec.ContractSet):
        with pytest.raises(rulec.CompileError) as failed:
            load(path)
        text = str(failed.value)
        assert text.startswith(f"{path}:"), text
        assert "hunter2" not in text and "root:x" not in text, text
        assert code is None or f"error[{code}]" in text
        assert all("hunter2" not in str(d) for d in failed.value.diagnostics)


@pytest.mark.parametrize(
    ("content", "quoted"),
    [
        (None, "amonut"),  # contracts.BROKEN: an unknown name
        ("contract: t.x\nversion: 1.0.0\ninput:\n  a: [int\nrules: []\n", "rules: []"),  # not YAML
    ],
)
def test_a_contract_with_an_error_is_quoted(tmp_path: Path, content: "str | None", quoted: str) -> None:
    from contracts import BROKEN

    path = tmp_path / "broken.yaml"
    path.write_text(content or BROKEN, encoding="utf-8")
    with pytest.raises(rulec.CompileError) as failed:
        rulec.compile(path)
    assert quoted in str(failed.value).split("\n", 1)[1], "the line is quoted"


@pytest.mark.parametrize(
    ("argument", "error", "message"),
    [
        # One line of YAML is a path, never compiled.
        ("contract: test.x", FileNotFoundError, "cannot read contract: test.x"),
        # A contract's text is a path too: the error says where text goes.
        (TRANSFER_YAML.read_text(encoding="utf-8"), OSError, "compile it with rulec.compile_text"),
        (b"contract: test.x\n", TypeError, "rulec.compile_text"),
    ],
)
def test_compile_takes_a_path_only(argument: object, error: type, message: str) -> None:
    with pytest.raises(error) as failed:
        rulec.compile(argument)  # type: ignore[arg-type]
    assert message in str(failed.value)
    assert len(str(failed.value)) < 400, "the text is not echoed whole"


def test_compile_text_reads_no_file() -> None:
    with pytest.raises(rulec.CompileError) as failed:
        rulec.compile_text("/etc/passwd")
    assert str(failed.value).startswith("<contract>:1:1: error[E0100]")
    assert "root" not in str(failed.value)


def test_load_bundle_tells_bytes_from_a_path_by_type(transfer: rulec.Contract, tmp_path: Path) -> None:
    bundle = transfer.to_bundle()
    path = tmp_path / "transfer.bundle.json"
    path.write_bytes(bundle)
    for given in (bundle, bytearray(bundle), path, str(path)):
        assert rulec.load_bundle(given).hash == transfer.hash
    # A str is a path, whatever it holds.
    with pytest.raises(OSError, match="cannot read"):
        rulec.load_bundle(bundle.decode("utf-8"))


def test_the_result_parts(transfer: rulec.Contract) -> None:
    result = transfer.evaluate(transfer_input(), channel="server")
    assert result.decision == "allow"
    assert result.contract == "acme.payments.transfer"
    assert isinstance(result.reasons, list) and isinstance(result.findings, list)
    assert isinstance(result.effects, dict) and result.errors == []
    as_dict = result.to_dict()
    assert list(as_dict) == ["contract", "version", "decision", "reasons", "findings", "effects", "errors"]
    assert json.loads(result.to_json())["decision"] == "allow"
    assert "allow" in repr(result)


def test_a_denial_has_its_reasons(transfer: rulec.Contract) -> None:
    result = transfer.evaluate(transfer_input(amount=Decimal("-5")), channel="server")
    assert result.decision == "deny"
    assert [r["rule"] for r in result.reasons] == ["positive_amount"]
    assert result.reasons[0]["outcome"] == "deny"


def test_example_requests_match_their_lines() -> None:
    """Every example request: the dict path and the line path agree."""
    contracts = rulec.ContractSet(EXAMPLES / "contracts")
    lines = (EXAMPLES / "requests" / "acme.payments.transfer.ndjson").read_text(encoding="utf-8").splitlines()
    fresh = rulec.ContractSet(EXAMPLES / "contracts")
    for line in lines:
        request = json.loads(line, parse_float=Decimal)
        got = contracts.evaluate(
            request["input"], contract=request["contract"], channel=request["channel"], component=request.get("component")
        )
        assert got.to_json() == fresh.evaluate_line(line)


def test_the_cli_prints_the_same_bytes(tmp_path: Path) -> None:
    """Against the built `rulec` binary, when there is one."""
    binary = rulec_binary()
    if binary is None:
        pytest.skip("no rulec binary (cargo build -p cli, or RULEC_BIN)")
    requests = EXAMPLES / "requests" / "acme.payments.transfer.ndjson"
    printed = subprocess.run(
        [str(binary), "eval", str(EXAMPLES / "contracts"), "--request", str(requests)],
        capture_output=True, text=True, check=False,
    ).stdout.splitlines()
    contracts = rulec.ContractSet(EXAMPLES / "contracts")
    for line, expected in zip(requests.read_text(encoding="utf-8").splitlines(), printed):
        request = json.loads(line, parse_float=Decimal)
        got = contracts.evaluate(
            request["input"], contract=request["contract"], channel=request["channel"], component=request.get("component")
        )
        assert got.to_json() == expected


def test_bundles_from_bytes_and_from_a_path(tmp_path: Path, transfer: rulec.Contract) -> None:
    bundle = tmp_path / "acme.payments.transfer.bundle.json"
    bundle.write_bytes(transfer.to_bundle())
    from_bytes = rulec.load_bundle(bundle.read_bytes())
    from_path = rulec.load_bundle(bundle)
    assert from_bytes.hash == from_path.hash == transfer.hash
    assert from_bytes.warnings == []
    line = from_path.evaluate(transfer_input(), channel="server").to_json()
    assert line == transfer.evaluate(transfer_input(), channel="server").to_json()
    assert rulec.ContractSet(tmp_path).names == ["acme.payments.transfer"]


def test_a_bundle_needing_a_host_function_names_it() -> None:
    bundle = Path(__file__).resolve().parents[2] / "ir" / "tests" / "verify" / "base.bundle.json"
    with pytest.raises(rulec.BundleError, match="needs the host function `risk"):
        rulec.load_bundle(bundle)


def test_a_set_routes_by_name_and_refuses_unknown_names() -> None:
    contracts = rulec.ContractSet(EXAMPLES / "contracts", engine="interp")
    assert "acme.payments.transfer" in contracts and len(contracts) == len(contracts.names)
    result = contracts.evaluate(transfer_input(), contract="acme.payments.transfer", channel="server")
    assert result.decision == "allow"
    with pytest.raises(rulec.UnknownContractError, match="did you mean `acme.payments.transfer`"):
        contracts.evaluate(transfer_input(), contract="acme.payments.transfr", channel="server")
    with pytest.raises(rulec.InputError, match="several contracts are loaded") as refused:
        contracts.evaluate(transfer_input(), channel="server")
    assert refused.value.details[0]["path"] == "contract"
    assert contracts["acme.payments.transfer"].name == "acme.payments.transfer"
    with pytest.raises(KeyError):
        contracts["nope"]


def test_engines_by_name(transfer: rulec.Contract) -> None:
    native = rulec.compile(TRANSFER_YAML, engine="jit")
    assert native.engine == "native"
    assert rulec.compile(TRANSFER_YAML, engine="interp").engine == "interpreted"
    with pytest.raises(ValueError, match="unknown engine"):
        rulec.compile(TRANSFER_YAML, engine="fast")
    line = native.evaluate(transfer_input(), channel="server").to_json()
    assert line == rulec.compile(TRANSFER_YAML, engine="interp").evaluate(transfer_input(), channel="server").to_json()


def test_models_are_scored() -> None:
    velocity = rulec.ContractSet(EXAMPLES / "contracts" / "acme.payments.velocity.yaml")
    lines = (EXAMPLES / "requests" / "acme.payments.velocity.ndjson").read_text(encoding="utf-8").splitlines()
    for line in lines:
        assert '"error"' not in velocity.evaluate_line(line)[:10]
