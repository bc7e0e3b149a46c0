"""The registry's consumer in Python: load ``skill-registry.json`` (or the
UnifiedSkillContract v1 export), check contracts as ADR-0002 says, and ground
a model's tool calls with the answer the Rust runtime gives
(``Runtime::ground``): the same resolution, the same limits, the same schema
checks, the same formats."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Union

import jsonschema
from jsonschema import Draft202012Validator, FormatChecker, ValidationError

from ._formats import FORMATS, ecma_pattern

__all__ = [
    "DEFAULT_LIMITS",
    "ContractCheck",
    "GroundError",
    "Grounded",
    "Limits",
    "Refused",
    "RegistryError",
    "SkillRegistry",
    "validate_skill_contract",
]


@dataclass(frozen=True)
class Limits:
    """Limits on a call's arguments: the size of their JSON text, in bytes,
    and how deeply they nest (a flat object is 1)."""

    max_input_bytes: int = 1 << 20
    max_depth: int = 64


#: The runtime's default limits (``Limits::default()``).
DEFAULT_LIMITS = Limits()

# serde_json's parser refuses to nest deeper than this (its recursion limit).
_PARSER_DEPTH = 127


@dataclass(frozen=True)
class GroundError:
    """One reason a call or a contract is refused, at a JSON pointer."""

    path: str
    message: str


@dataclass(frozen=True)
class Grounded:
    """A call that grounds: its skill's contract, its parsed arguments, and
    what running it asks of the caller."""

    skill: dict[str, Any]
    arguments: Any
    is_destructive: bool
    requires_hitl: bool
    ok: bool = field(default=True, init=False)

    def __getitem__(self, key: str) -> Any:
        """The TypeScript package's keys (``answer["isDestructive"]``), for
        code written against either."""
        return {
            "ok": True,
            "skill": self.skill,
            "arguments": self.arguments,
            "isDestructive": self.is_destructive,
            "is_destructive": self.is_destructive,
            "requiresHitl": self.requires_hitl,
            "requires_hitl": self.requires_hitl,
        }[key]

    def to_dict(self) -> dict[str, Any]:
        """The answer as ``skill-registry ground`` prints it."""
        return {
            "ok": True,
            "skill": self.skill["skill_id"].split("@")[0],
            "version": self.skill["metadata"]["version"],
            "isDestructive": self.is_destructive,
            "requiresHitl": self.requires_hitl,
        }


@dataclass(frozen=True)
class Refused:
    """A call that does not ground: the runtime's error code and each error."""

    code: str
    errors: list[GroundError]
    ok: bool = field(default=False, init=False)

    def __getitem__(self, key: str) -> Any:
        """The TypeScript package's keys (``answer["errors"]``), for code
        written against either."""
        return self.to_dict()[key]

    def to_dict(self) -> dict[str, Any]:
        """The answer as ``skill-registry ground`` prints it."""
        return {
            "ok": False,
            "code": self.code,
            "errors": [{"path": e.path, "message": e.message} for e in self.errors],
        }


GroundResult = Union[Grounded, Refused]


class RegistryError(ValueError):
    """A registry that does not load: every contract that failed, with why."""

    def __init__(self, message: str, errors: list[GroundError]):
        super().__init__(message)
        self.errors = errors


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _compiled_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@lru_cache(maxsize=1024)
def _compiled_pattern(pattern: str) -> re.Pattern[str]:
    return ecma_pattern(pattern)


def _format_checker() -> FormatChecker:
    checker = FormatChecker()
    for name, check in FORMATS.items():
        checker.checks(name)(lambda instance, check=check: not isinstance(instance, str) or check(instance))
    return checker


_Validator = jsonschema.validators.extend(Draft202012Validator, {"pattern": _pattern})
_FORMATS = _format_checker()


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _errors(validator: Any, value: Any) -> list[GroundError]:
    return [
        GroundError(_pointer(e.absolute_path), e.message)
        for e in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    ]


_CONTRACT = _Validator(
    json.loads(resources.files(__package__).joinpath("unified-skill-contract-v1.schema.json").read_text())["items"],
    format_checker=_FORMATS,
)


@dataclass(frozen=True)
class ContractCheck:
    """What :func:`validate_skill_contract` found: ``ok``, or every error."""

    ok: bool
    errors: list[GroundError]

    def __bool__(self) -> bool:
        return self.ok


def validate_skill_contract(value: Any) -> ContractCheck:
    """Check one UnifiedSkillContract v1, strictly: any missing or wrongly
    typed field rejects the whole contract."""
    errors = _errors(_CONTRACT, value)
    return ContractCheck(not errors, errors)


# --- Versions (semver 2.0.0 precedence, build metadata last, as the runtime orders them).

_SEMVER = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?"
)


def _identifiers(text: str) -> tuple[tuple[int, int, str], ...]:
    # Numeric identifiers sort before alphanumeric ones, numerically.
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in text.split("."))


def _version_key(text: str) -> tuple[Any, ...] | None:
    m = _SEMVER.fullmatch(text)
    if not m:
        return None
    major, minor, patch, pre, build = m.groups()
    return (
        int(major),
        int(minor),
        int(patch),
        (1,) if pre is None else (0, _identifiers(pre)),
        (0,) if build is None else (1, _identifiers(build)),
    )


# --- Arguments as the runtime reads them.

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Malformed(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _Malformed(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Malformed("number out of range")
    return value


def _integer(text: str) -> int:
    value = int(text)
    float(value)  # Beyond a double: serde_json refuses it (OverflowError).
    return value


def _depth(value: Any, limit: int) -> int:
    deepest = 0
    stack = [(value, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            deepest = max(deepest, d + 1)
            if deepest > limit:
                return deepest
            stack.extend((item, d + 1) for item in (x.values() if isinstance(x, dict) else x))
    return deepest


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if _LONE_SURROGATE.search(x):
                return True
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


def _parse(text: str) -> Any:
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite, parse_int=_integer)
    except (ValueError, OverflowError, RecursionError) as e:
        raise _Malformed(str(e)) from e
    if _has_lone_surrogate(value):
        raise _Malformed("lone surrogate in a string")
    return value


def _refused(code: str, message: str, path: str = "") -> Refused:
    return Refused(code, [GroundError(path, message)])


@dataclass
class _Entry:
    name: str
    version: str
    status: str
    exposed: bool
    tool_name: str | None
    contract: dict[str, Any]
    key: tuple[Any, ...] = ()


class SkillRegistry:
    """Skills by name, their versions ordered, and the contract of each."""

    def __init__(self, value: Any, limits: Limits = DEFAULT_LIMITS):
        """A registry from a parsed ``skill-registry.json`` (``{registry_version,
        skills}``) or a UnifiedSkillContract v1 list. Every contract must pass
        :func:`validate_skill_contract`, or nothing loads (a
        :class:`RegistryError` names each)."""
        self._limits = limits
        entries = [_from_contract(c) for c in value] if isinstance(value, list) else _registry_entries(value)
        errors: list[GroundError] = []
        self._by_name: dict[str, list[_Entry]] = {}
        self._by_tool: dict[str, str] = {}
        self._contracts: list[dict[str, Any]] = []
        self._checks: dict[str, Any] = {}
        for i, entry in enumerate(entries):
            check = validate_skill_contract(entry.contract)
            if not check.ok:
                errors.extend(GroundError(f"/{i}{p.path}", p.message) for p in check.errors)
                continue
            key = _version_key(entry.version)
            if key is None:
                errors.append(GroundError(f"/{i}", f"version {entry.version!r} is not semver"))
                continue
            entry.key = key
            self._by_name.setdefault(entry.name, []).append(entry)
            self._contracts.append(entry.contract)
        if errors:
            summary = "; ".join(f"at {e.path}: {e.message}" for e in errors)
            raise RegistryError(f"{len(errors)} contract error(s): {summary}", errors)
        for versions in self._by_name.values():
            versions.sort(key=lambda e: e.key)
        for entry in entries:
            if entry.exposed and entry.tool_name and entry.tool_name not in self._by_tool:
                self._by_tool[entry.tool_name] = entry.name

    @classmethod
    def from_file(cls, path: str | Path, limits: Limits = DEFAULT_LIMITS) -> SkillRegistry:
        """Read ``path``: ``skill-registry.json``, or the UnifiedSkillContract v1 export."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), limits)

    @classmethod
    def from_json(cls, value: Any, limits: Limits = DEFAULT_LIMITS) -> SkillRegistry:
        """The registry of an already parsed document (see the constructor)."""
        return cls(value, limits)

    @property
    def contracts(self) -> list[dict[str, Any]]:
        """Every contract, in the file's order."""
        return list(self._contracts)

    def get_skill(self, skill_id: str) -> dict[str, Any] | None:
        """The contract ``skill_id`` names (``name@version``, or ``name`` for
        its highest version), or ``None``."""
        entry, _ = self._lookup(skill_id)
        return entry.contract if entry else None

    def _lookup(self, reference: str) -> tuple[_Entry | None, list[_Entry] | None]:
        name, _, version = reference.partition("@")
        versions = self._by_name.get(name)
        if not versions:
            return None, None
        if "@" not in reference:
            return versions[-1], versions
        wanted = _version_key(version)
        for entry in versions:
            if entry.version == version or (wanted is not None and entry.key == wanted):
                return entry, versions
        return None, versions

    def _validator(self, entry: _Entry) -> Any:
        skill_id = entry.contract["skill_id"]
        check = self._checks.get(skill_id)
        if check is None:
            check = _Validator(entry.contract["interface"]["input_schema"], format_checker=_FORMATS)
            self._checks[skill_id] = check
        return check

    def ground(self, call: dict[str, Any]) -> GroundResult:
        """Ground a model's tool call before it runs: ``call["name"]`` is a
        skill's name, its ``name@version``, or its MCP/OpenAI tool name;
        ``call["arguments"]`` is JSON text (as a tool call carries it) or a
        value. The answer is the Rust runtime's (``skill-examples ground``):
        the skill exists and may run here, and the arguments pass its input
        stage (size and depth limits, the input schema with its formats); or
        why not, each error with its JSON pointer."""
        name = str(call.get("name") or "")
        reference = name if name in self._by_name else self._by_tool.get(name, name)
        entry, versions = self._lookup(reference)
        if versions is None:
            return _refused("unknown_skill", f"unknown skill `{reference}`")
        if entry is None:
            known = ", ".join(e.version for e in versions)
            return _refused("unknown_version", f"skill `{reference}` has no such version; known: {known}")
        constraints = entry.contract["constraints"]
        if constraints["sandbox_type"] != "LOCAL":
            sandbox = constraints["sandbox_type"]
            return _refused(
                "sandbox_unavailable",
                f"skill `{entry.name}` needs a {sandbox} sandbox, which this runtime does not provide",
            )
        if entry.status == "disabled":
            return _refused("disabled", f"skill `{entry.name}` is disabled")
        arguments = call.get("arguments", "{}")
        if isinstance(arguments, str):
            text = arguments
        else:
            try:
                text = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as e:
                return _refused("malformed_json", f"arguments are not JSON: {e}")
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self._limits.max_input_bytes:
            return _refused("too_large", f"arguments of {size} bytes exceed the limit of {self._limits.max_input_bytes}")
        try:
            value = _parse(text)
        except _Malformed as e:
            return _refused("malformed_json", f"arguments are not JSON: {e}")
        depth = _depth(value, max(self._limits.max_depth, _PARSER_DEPTH))
        if depth > _PARSER_DEPTH:
            return _refused("malformed_json", "arguments are not JSON: recursion limit exceeded")
        if depth > self._limits.max_depth:
            return _refused("too_deep", f"arguments nest deeper than {self._limits.max_depth}")
        errors = _errors(self._validator(entry), value)
        if errors:
            return Refused("invalid_input", errors)
        return Grounded(entry.contract, value, constraints["is_destructive"], constraints["requires_hitl"])


# --- The two file shapes.


def _registry_entries(value: Any) -> list[_Entry]:
    if not isinstance(value, dict) or not isinstance(value.get("skills"), list):
        raise RegistryError(
            "neither skill-registry.json (an object with `skills`) nor a UnifiedSkillContract v1 list", []
        )
    entries = []
    for skill in value["skills"]:
        s = skill if isinstance(skill, dict) else {}
        constraints = s.get("constraints") if isinstance(s.get("constraints"), dict) else {}
        mcp = s.get("mcp") if isinstance(s.get("mcp"), dict) else {}
        entries.append(
            _Entry(
                name=s.get("name"),
                version=s.get("version"),
                status=s.get("status") or "enabled",
                exposed=mcp.get("exposed") is True,
                tool_name=mcp.get("tool_name") or s.get("name"),
                contract={
                    "skill_id": f"{s.get('name')}@{s.get('version')}",
                    "metadata": {
                        "name": s.get("title") or s.get("name"),
                        "description": s.get("description"),
                        "source": constraints.get("source"),
                        "status": s.get("status"),
                        "version": s.get("version"),
                    },
                    "interface": {"input_schema": s.get("inputs_schema"), "output_schema": s.get("outputs_schema")},
                    "constraints": {
                        "is_destructive": constraints.get("is_destructive"),
                        "requires_hitl": constraints.get("requires_hitl"),
                        "sandbox_type": constraints.get("sandbox_type"),
                    },
                },
            )
        )
    return entries


def _from_contract(contract: Any) -> _Entry:
    c = contract if isinstance(contract, dict) else {}
    skill_id = c.get("skill_id") if isinstance(c.get("skill_id"), str) else ""
    name, at, version = skill_id.partition("@")
    metadata = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
    return _Entry(
        name=name,
        version=metadata.get("version") or (version if at else "0.0.0"),
        status=metadata.get("status") or "enabled",
        exposed=False,
        tool_name=None,
        contract=contract,
    )
