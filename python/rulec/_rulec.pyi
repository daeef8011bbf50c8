"""Type stubs of the extension module ``rulec._rulec`` (see ``rulec``)."""

import datetime
import os
from typing import Any, Dict, List, Literal, Optional, Sequence, Union, overload

__version__: str

Engine = Literal["auto", "jit", "interp"]
"""Which engine evaluates: the interpreter, native code compiled at load,
or the interpreter until the contract is hot, then native code."""

class RulecError(Exception):
    """The base of every error rulec raises."""

class InputError(RulecError):
    """An input that does not fit the contract; the message is ``rulec eval``'s."""

    record: Optional[int]
    """In a list given to ``evaluate_batch``: the index of the record that
    does not fit (the message starts ``record N: ``); ``None`` otherwise."""

    details: List[Dict[str, str]]
    """Every problem: ``{"path": "input.source.kyc_level", "message": ...}``."""
    json: str
    """The error line ``rulec eval`` prints for the same request."""

class CompileError(RulecError):
    """A contract that does not compile; ``str()`` is what ``rulec check`` prints."""

    diagnostics: List[Dict[str, Any]]
    """Every diagnostic: code, severity, message, file, line, column, labels, help, ..."""

class BundleError(RulecError):
    """A bundle that cannot be loaded (damaged, truncated, another version)."""

class UnknownContractError(RulecError):
    """A request names a contract the set does not hold."""

class Result:
    """The result of evaluating one input."""

    @property
    def contract(self) -> str:
        """The contract's name."""
    @property
    def version(self) -> str:
        """The contract's version."""
    @property
    def decision(self) -> Literal["allow", "deny"]:
        """``"allow"`` or ``"deny"``."""
    @property
    def reasons(self) -> List[Dict[str, str]]:
        """The rules that decided: ``rule``, ``outcome``, ``message``."""
    @property
    def findings(self) -> List[Dict[str, str]]:
        """The findings: ``rule``, ``code``, ``severity``, ``message``."""
    @property
    def effects(self) -> Dict[str, Any]:
        """The effects set, by name; decimals as ``decimal.Decimal``."""
    @property
    def errors(self) -> List[Dict[str, str]]:
        """The rules' evaluation errors: ``rule``, ``message``."""
    def to_dict(self) -> Dict[str, Any]:
        """The result as a dict, keys in the JSON line's order."""
    def to_json(self) -> str:
        """The line ``rulec eval`` prints for the same request."""

class Contract:
    """A compiled contract loaded into an engine; thread-safe."""

    @property
    def name(self) -> str:
        """The contract's name."""
    @property
    def version(self) -> str:
        """The contract's version."""
    @property
    def hash(self) -> str:
        """The bundle's content hash."""
    @property
    def engine(self) -> str:
        """``interpreted``, ``compiling``, ``native`` or ``failed: <why>``."""
    @property
    def warnings(self) -> List[Dict[str, Any]]:
        """The compiler's warnings, as diagnostic dicts."""
    def evaluate(
        self,
        input: Dict[str, Any],
        channel: Optional[str] = None,
        *,
        component: Optional[str] = None,
        now: Union[str, datetime.datetime, None] = None,
    ) -> Result:
        """Evaluates one input; raises ``InputError`` when it does not fit."""
    @overload
    def evaluate_batch(
        self,
        data: List[Dict[str, Any]],
        channel: Optional[str] = None,
        fields: Union[str, Sequence[str], None] = None,
    ) -> List[Dict[str, Any]]:
        """Evaluates a list of input dicts, in order: a list of result dicts
        (``Result.to_dict()``'s, with the parts ``fields`` names); every
        record is validated before any is evaluated."""
    @overload
    def evaluate_batch(
        self,
        data: Any,
        channel: Optional[str] = None,
        fields: Union[str, Sequence[str], None] = None,
    ) -> Any:
        """Evaluates every record of Arrow data (``__arrow_c_stream__`` or
        ``__arrow_c_array__``): a ``pyarrow.Table`` with the columns of
        ``rulec eval --output-format arrow``, one row per record, in order."""
    def evaluate_json(self, request: str) -> str:
        """A request's JSON text to the line ``rulec eval CONTRACT`` prints for
        it (a request naming another contract is ``unknown_contract``)."""
    def to_bundle(self) -> bytes:
        """The contract's bundle, the bytes ``rulec compile`` writes."""

class ContractSet:
    """The contracts of a folder, routed by name as ``rulec eval DIR`` routes."""

    def __init__(self, folder: Union[str, "os.PathLike[str]"], engine: Engine = "auto") -> None:
        """Reads, compiles and loads every contract and bundle under ``folder``."""
    @property
    def names(self) -> List[str]:
        """The contracts' names, sorted."""
    @property
    def revision(self) -> str:
        """The set's revision, named by its content."""
    @property
    def warnings(self) -> List[Dict[str, Any]]:
        """The compiler's warnings for every YAML file."""
    def evaluate(
        self,
        input: Dict[str, Any],
        contract: Optional[str] = None,
        channel: Optional[str] = None,
        *,
        component: Optional[str] = None,
        now: Union[str, datetime.datetime, None] = None,
    ) -> Result:
        """Evaluates one input against the contract named ``contract``."""
    def evaluate_line(self, line: str) -> str:
        """A request line to the line ``rulec eval DIR`` prints for it."""
    def __getitem__(self, name: str) -> Contract:
        """The contract called ``name``; ``KeyError`` when there is none."""
    def __contains__(self, name: object) -> bool: ...
    def __len__(self) -> int: ...

def compile(path: Union[str, "os.PathLike[str]"], engine: Engine = "auto") -> Contract:
    """Compiles the contract in the YAML file at ``path`` (never its text:
    that is :func:`compile_text`)."""

def compile_text(text: str, engine: Engine = "auto") -> Contract:
    """Compiles the contract whose YAML is ``text`` (diagnostics name it
    ``<contract>``)."""

def load_bundle(path_or_bytes: Union[bytes, bytearray, str, "os.PathLike[str]"], engine: Engine = "auto") -> Contract:
    """Loads a bundle from its bytes (``bytes``, ``bytearray``) or its path
    (``str``, ``os.PathLike``): the type says which."""
