"""Tool calls for every skill of a registry, as JSON lines ``{"name",
"arguments"}`` (the arguments as JSON text, as a model's tool call carries
them): valid calls synthesized from each input schema, and mutations of
them (wrong types, missing and extra fields, bad formats and patterns,
out-of-range and oddly written numbers, lengths in multi-byte characters,
malformed and over-deep JSON). tests/consumers.rs feeds the same lines to the
runtime's grounder and to the TypeScript and Python packages'.

usage: python3 tests/consumers/calls.py REGISTRY [PER_SKILL] [SEED]
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any


class Raw:
    """A piece of JSON text written as is (a number as `5.0` or `5e0`)."""

    def __init__(self, text: str):
        self.text = text


def dump(v: Any, rng: random.Random) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, dict):
        sep = rng.choice([",", ", ", ",\n "])
        return "{" + sep.join(f"{dump(k, rng)}:{dump(x, rng)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x, rng) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=rng.random() < 0.5)
    return json.dumps(v)


def resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = root["$defs"][schema["$ref"].split("/")[-1]]
    return schema


VALID_URIS = [
    "https://shop.example.com/p/1",
    "http://example.com",
    "https://example.com/a/b?x=1&y=2#top",
    "urn:isbn:0451450523",
    "mailto:someone@example.com",
    "ftp://user:pw@host.example:21/file.txt",
    "http://[::1]:8080/",
    "http://[2001:db8::7]/c=GB?objectClass?one",
    "http://192.168.0.1/index",
    "https://example.com/%E2%82%AC",
    "file:///etc/hosts",
    "a:b",
    "http:",
    "x+y-z.w:rest",
]
BAD_URIS = [
    "",
    "not a uri",
    "//example.com/no-scheme",
    "/relative/path",
    "http://exa mple.com",
    "http://example.com/%zz",
    "http://example.com/%4",
    "1http://example.com",
    "http://[::1",
    "http://[:::1]/",
    "http://[fe80::1%25eth0]/",
    "http://a:b:c/",
    "http://a@b@c/",
    "http://example.com/\u00e9",
    "https://example.com/a b",
    "http://ex<ample>.com",
    "ht tp://x",
    ":nothing",
    "http://[v1.x]/",
    "http://example.com:80a/",
]
ODD_STRINGS = ["", " ", "\n", "é", "😀", "a\u0000b", "\t", "Ω" * 3, "x" * 40, "\u00ad"]


def gen_pattern(pattern: str, rng: random.Random) -> str:
    """A string matching a pattern made of literals, classes and quantifiers."""
    out, i = [], 0
    body = pattern.lstrip("^").rstrip("$")
    while i < len(body):
        if body[i] == "[":
            j = body.index("]", i)
            spec, i = body[i + 1 : j], j + 1
            chars = []
            k = 0
            while k < len(spec):
                if k + 2 < len(spec) and spec[k + 1] == "-":
                    chars += [chr(c) for c in range(ord(spec[k]), ord(spec[k + 2]) + 1)]
                    k += 3
                else:
                    chars.append(spec[k])
                    k += 1
            atom = chars
        else:
            atom, i = [body[i]], i + 1
        lo = hi = 1
        if i < len(body) and body[i] == "{":
            j = body.index("}", i)
            parts = body[i + 1 : j].split(",")
            lo, hi = int(parts[0]), int(parts[-1] or parts[0])
            i = j + 1
        elif i < len(body) and body[i] in "*+?":
            lo, hi = {"*": (0, 4), "+": (1, 4), "?": (0, 1)}[body[i]]
            i += 1
        out += [rng.choice(atom) for _ in range(rng.randint(lo, min(hi, lo + 8)))]
    return "".join(out)


def synth(schema: Any, root: dict, rng: random.Random, depth: int = 0) -> Any:
    """A value valid against ``schema``."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return synth(rng.choice(schema[key]), root, rng, depth)
    t = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(t, list):
        t = rng.choice(t)
    if t == "null":
        return None
    if t == "boolean":
        return rng.random() < 0.5
    if t == "integer":
        lo, hi = schema.get("minimum", -1000), schema.get("maximum", 1000)
        return rng.choice([lo, hi, rng.randint(lo, min(hi, lo + 100)), rng.randint(lo, hi)])
    if t == "number":
        lo, hi = schema.get("minimum", -1000.0), schema.get("maximum", 1000.0)
        return rng.uniform(lo, hi)
    if t == "string":
        if schema.get("format") == "uri":
            return rng.choice(VALID_URIS)
        if "pattern" in schema:
            return gen_pattern(schema["pattern"], rng)
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", 24)
        n = rng.choice([lo, hi, rng.randint(lo, min(hi, lo + 24))])
        alphabet = rng.choice(["abcdef xyz", "é😀Ωa", "ABC-123_"])
        return "".join(rng.choice(alphabet) for _ in range(n))
    if t == "array":
        lo = schema.get("minItems", 0)
        hi = min(schema.get("maxItems", lo + 3), lo + 3)
        return [synth(schema.get("items", {}), root, rng, depth + 1) for _ in range(rng.randint(lo, hi))]
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return {
        name: synth(sub, root, rng, depth + 1)
        for name, sub in props.items()
        if name in required or rng.random() < 0.6
    }


def leaves(v: Any, path: tuple = ()) -> list[tuple]:
    """Every place in ``v``: paths to its values, the root included."""
    found = [path]
    if isinstance(v, dict):
        for k, x in v.items():
            found += leaves(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            found += leaves(x, path + (i,))
    return found


def replace(v: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = dict(v) if isinstance(v, dict) else list(v)
    copy[path[0]] = replace(v[path[0]], path[1:], new)
    return copy


def get(v: Any, path: tuple) -> Any:
    for p in path:
        v = v[p]
    return v


def schema_at(schema: dict, root: dict, value: Any, path: tuple) -> dict:
    s = resolve(schema, root)
    for p in path:
        if isinstance(p, int):
            s = resolve(s.get("items", {}), root)
        else:
            s = resolve(s.get("properties", {}).get(p, {}), root)
    return s


def mutate(value: Any, schema: dict, root: dict, rng: random.Random) -> Any:
    places = leaves(value)
    path = rng.choice(places)
    here = get(value, path)
    s = schema_at(schema, root, value, path)
    kind = rng.randrange(12)
    if kind == 0:  # a wrong type
        return replace(value, path, rng.choice([1, -1, 2.5, "1", True, None, [], {}, [1], {"a": 1}]))
    if kind == 1 and isinstance(here, dict) and here:  # a field missing
        gone = rng.choice(list(here))
        return replace(value, path, {k: x for k, x in here.items() if k != gone})
    if kind == 2 and isinstance(here, dict):  # an extra field
        return replace(value, path, {**here, rng.choice(["extra", "x", "Page_Data", "__proto__"]): rng.choice([1, "y", None])})
    if kind == 3 and isinstance(here, int) and not isinstance(here, bool):  # numbers
        lo, hi = s.get("minimum", -(10**6)), s.get("maximum", 10**6)
        return replace(
            value,
            path,
            rng.choice(
                [
                    lo - 1,
                    hi + 1,
                    Raw(f"{here}.0"),
                    Raw(f"{here}e0"),
                    Raw(f"{here}.5"),
                    Raw("-0.0"),
                    Raw("-0"),
                    Raw("1e20"),
                    Raw("1e400"),
                    Raw("4294967296"),
                    Raw("18446744073709551616"),
                    Raw(f"{hi}.000001"),
                    Raw(f"{lo}E+0"),
                    10**30,
                ]
            ),
        )
    if kind == 4 and isinstance(here, str):  # strings: lengths, patterns, formats
        lo, hi = s.get("minLength", 0), s.get("maxLength", 32)
        choices = [
            "",
            here.upper(),
            here + "\n",
            "\n" + here,
            "9" + here,
            here + "-",
            "é" * hi,
            "é" * (hi + 1),
            "😀" * hi,
            "😀" * (hi + 1),
            "a" * max(lo - 1, 0),
            rng.choice(ODD_STRINGS),
        ]
        if s.get("format") == "uri":
            choices += BAD_URIS + VALID_URIS
        return replace(value, path, rng.choice(choices))
    if kind == 5 and isinstance(here, list):  # arrays
        s_items = s.get("items", {})
        return replace(
            value,
            path,
            rng.choice(
                [
                    [],
                    here + [1],
                    [synth(s_items, root, rng) for _ in range(s.get("maxItems", 3) + 1)][: s.get("maxItems", 3) + 1],
                    here + [None],
                ]
            ),
        )
    if kind == 6:  # a null where a value was
        return replace(value, path, None)
    if kind == 7:  # the root not an object
        return rng.choice([[], None, "x", 1, [value]])
    if kind == 8:  # deep nesting in an extra or existing place
        n = rng.choice([62, 63, 64, 65, 126, 127, 128, 200])
        deep = Raw("[" * n + "]" * n)
        return replace(value, path, deep) if path else {"deep": deep}
    return None  # text-level mutation below


def malformed(text: str, rng: random.Random) -> str:
    return rng.choice(
        [
            text[: max(len(text) - 1, 0)],
            text + ",",
            text.replace("}", ",}", 1),
            text.replace('"', "'", 2),
            "NaN",
            '{"x": NaN}',
            '{"x": Infinity}',
            '{"x": "\\ud800"}',
            '{"x": "\\udc00\\ud800"}',
            '{"x": "\\ud83d\\ude00"}',
            text + " ",
            " " + text,
            text + text,
            "",
            "{" + text[1:] if text.startswith("{") else text,
            text.replace(":", ":\u00a0", 1),
            text.replace("{", '{"dup":1,"dup":2,', 1),
            '{"\\ud800": 1}',
            "\ufeff" + text,
            # Escapes where the text had plain characters: the same value.
            text.replace("_", "\\u005f"),
            text.replace('"', '"\\u0020', 1),
            text.replace("a", "\\u0061"),
        ]
    )


def duplicate_keys(value: Any, rng: random.Random) -> str | None:
    """The object's text with one of its keys written twice (the first copy a
    different value): JSON keeps the last."""
    if not isinstance(value, dict) or not value:
        return None
    key = rng.choice(list(value))
    decoy = rng.choice(["wrong", 1, None, True])
    if rng.random() < 0.5:  # the decoy first: the value is kept
        return "{" + f"{dump(key, rng)}:{dump(decoy, rng)}," + dump(value, rng)[1:]
    return dump(value, rng)[:-1] + f",{dump(key, rng)}:{dump(decoy, rng)}" + "}"


def calls_for(skill: dict, tool: str, per_skill: int, rng: random.Random) -> list[dict]:
    schema = skill["inputs_schema"]
    calls = []
    for i in range(per_skill):
        name = tool if i % 3 == 1 else skill["name"]
        value = synth(schema, schema, rng)
        roll = rng.random()
        if roll < 0.35:
            text = dump(value, rng)
        elif roll < 0.42:
            text = duplicate_keys(value, rng) or dump(value, rng)
        elif roll < 0.88:
            mutated = mutate(value, schema, schema, rng)
            if mutated is None:
                text = malformed(dump(value, rng), rng)
            else:
                if rng.random() < 0.25:  # a second mutation
                    mutated = mutate(mutated, schema, schema, rng) or mutated
                text = dump(mutated, rng)
        else:
            text = malformed(dump(value, rng), rng)
        calls.append({"name": name, "arguments": text})
    return calls


def main() -> None:
    registry = json.load(open(sys.argv[1], encoding="utf-8"))
    per_skill = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    out = sys.stdout
    for skill in registry["skills"]:
        rng = random.Random(f"{seed}:{skill['name']}")
        tool = (skill.get("mcp") or {}).get("tool_name") or skill["name"]
        for call in calls_for(skill, tool, per_skill, rng):
            out.write(json.dumps(call) + "\n")
    # Arguments at the size limit (1 MiB of JSON text) and one byte over it.
    for size in (1 << 20, (1 << 20) + 1):
        filler = "x" * (size - len('{"message":""}'))
        out.write(json.dumps({"name": "echo", "arguments": '{"message":"' + filler + '"}'}) + "\n")
    # Calls that do not name a skill of the registry.
    for name in ["", "nope", "vlevel_calculator@9.9.9", "VLEVEL_CALCULATOR", "vlevel_calculator@1.0.0"]:
        out.write(json.dumps({"name": name, "arguments": "{}"}) + "\n")


if __name__ == "__main__":
    main()
