"""rulec: compile YAML business-rule contracts and evaluate them in process.

The work is done by rulec's Rust crates through the extension module
``rulec._rulec``: the front end compiles contracts, the runtime validates
inputs and evaluates them (on the interpreter, or as native code from the
Cranelift JIT), so results are byte for byte those of ``rulec eval``.

- :func:`compile` (a YAML file's path), :func:`compile_text` (the YAML
  itself) and :func:`load_bundle` make a :class:`Contract`;
- :class:`ContractSet` loads a folder and routes requests by contract name;
- :meth:`Contract.evaluate` returns a :class:`Result`;
- errors are :class:`RulecError` and its subclasses :class:`InputError`,
  :class:`CompileError`, :class:`BundleError` and
  :class:`UnknownContractError`.
"""

from rulec._rulec import (
    BundleError,
    CompileError,
    Contract,
    ContractSet,
    InputError,
    Result,
    RulecError,
    UnknownContractError,
    __version__,
    compile,
    compile_text,
    load_bundle,
)

__all__ = [
    "BundleError",
    "CompileError",
    "Contract",
    "ContractSet",
    "InputError",
    "Result",
    "RulecError",
    "UnknownContractError",
    "__version__",
    "compile",
    "compile_text",
    "load_bundle",
]
