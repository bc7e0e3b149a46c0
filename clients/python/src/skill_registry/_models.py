"""Pydantic models of every skill's input and output, generated from the
registry's schemas by datamodel-code-generator (the maintained generator of
Pydantic v2 models from JSON Schema; it follows ``$ref``/``$defs``, enums,
bounds, patterns and ``additionalProperties``). An optional dependency:
``pip install skill-registry[models]``."""

from __future__ import annotations

import re
from typing import Any


def _camel(name: str) -> str:
    return re.sub(r"(?:^|[_\-.])([a-z0-9])", lambda m: m.group(1).upper(), name)


def _hoisted(schema: dict[str, Any], prefix: str, defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its definitions moved into ``defs`` under names
    prefixed by ``prefix`` (two skills may each define a ``Namespace``), and
    its references rewritten to them."""

    def rewrite(v: Any) -> Any:
        if isinstance(v, dict):
            out = {k: rewrite(x) for k, x in v.items() if k not in ("$defs", "$schema")}
            ref = out.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                out["$ref"] = f"#/$defs/{prefix}{ref[len('#/$defs/') :]}"
            return out
        if isinstance(v, list):
            return [rewrite(x) for x in v]
        return v

    for key, definition in (schema.get("$defs") or {}).items():
        defs[f"{prefix}{key}"] = {**rewrite(definition), "title": f"{prefix}{key}"}
    return rewrite(schema)


def models_of(registry: Any) -> str:
    """One module's text: ``<Skill>Input`` and ``<Skill>Output`` for every skill."""
    from datamodel_code_generator import DataModelType, InputFileType, generate
    from datamodel_code_generator.format import Formatter

    defs: dict[str, Any] = {}
    for contract in registry.contracts:
        skill = _camel(contract["skill_id"].split("@")[0])
        for side, schema in (
            ("Input", contract["interface"]["input_schema"]),
            ("Output", contract["interface"]["output_schema"]),
        ):
            name = f"{skill}{side}"
            defs[name] = {**_hoisted(schema, name, defs), "title": name}
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Skills",
        "$defs": defs,
        # Every model is generated, not only those a root refers to.
        "anyOf": [{"$ref": f"#/$defs/{name}"} for name in defs],
    }
    text = generate(
        document,
        input_file_type=InputFileType.JsonSchema,
        output_model_type=DataModelType.PydanticV2BaseModel,
        disable_timestamp=True,
        formatters=[Formatter.BUILTIN],
    )
    return str(text)
