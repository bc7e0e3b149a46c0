#!/usr/bin/env python3
"""Independent validator of the Brain OS skill registry v2 rules.

Written from the seed document (shared/seeds, "Skill Registry Schema (v2)"), not
from the Rust exporter, so the two can disagree. Standard library only.

usage: brainos_validator.py SKILL_REGISTRY_JSON [CAPABILITIES_JSON]
Prints one line per problem and exits 1 if there is any.
"""
import json
import re
import sys

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
CAPABILITY = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
REQUIRED = {
    "name": str, "version": str, "status": str, "description": str, "kind": str,
    "inputs_schema": dict, "outputs_schema": dict, "capabilities": list,
    "autonomy": str, "failure_modes": list,
}


def validate(registry, catalog=None):
    problems = []

    def bad(where, msg):
        problems.append(f"{where}: {msg}")

    if not isinstance(registry, dict):
        return ["registry: not an object"]
    rv = registry.get("registry_version")
    if not isinstance(rv, str) or not SEMVER.match(rv):
        bad("registry", f"registry_version {rv!r} is not semver")
    skills = registry.get("skills")
    if not isinstance(skills, list):
        return problems + ["registry: skills is not an array"]
    known_caps = None
    if catalog is not None:
        known_caps = {c.get("id") for c in catalog.get("capabilities", [])}
        for c in catalog.get("capabilities", []):
            if not CAPABILITY.match(str(c.get("id"))):
                bad("capabilities.json", f"id {c.get('id')!r} is not domain.verb")
    names = {}
    for i, s in enumerate(skills):
        where = f"skills[{i}]"
        if not isinstance(s, dict):
            bad(where, "not an object")
            continue
        where = f"skill {s.get('name')}@{s.get('version')}"
        for field, ty in REQUIRED.items():
            if field not in s:
                bad(where, f"missing required field {field}")
            elif not isinstance(s[field], ty):
                bad(where, f"{field} is not of type {ty.__name__}")
        if not SNAKE.match(str(s.get("name", ""))):
            bad(where, "name is not snake_case")
        if not SEMVER.match(str(s.get("version", ""))):
            bad(where, "version is not semver")
        if s.get("status") not in ("enabled", "disabled", "deprecated"):
            bad(where, f"status {s.get('status')!r} is not enabled|disabled|deprecated")
        if s.get("kind") not in ("logic", "pipeline"):
            bad(where, f"kind {s.get('kind')!r} is not logic|pipeline")
        if s.get("autonomy") not in ("L0", "L1", "L2", "L3"):
            bad(where, f"autonomy {s.get('autonomy')!r} is not L0..L3")
        caps = s.get("capabilities") or []
        for c in caps:
            if not isinstance(c, str) or not CAPABILITY.match(c):
                bad(where, f"capability {c!r} is not domain.verb")
            elif known_caps is not None and c not in known_caps:
                bad(where, f"capability {c!r} is not in capabilities.json")
        for fm in s.get("failure_modes") or []:
            if not isinstance(fm, dict):
                bad(where, "failure mode is not an object")
                continue
            if not SNAKE.match(str(fm.get("code", ""))):
                bad(where, f"failure mode code {fm.get('code')!r} is not snake_case")
            if not isinstance(fm.get("description"), str):
                bad(where, "failure mode without a description")
            if not isinstance(fm.get("retryable", False), bool):
                bad(where, "failure mode retryable is not a boolean")
        side = s.get("side_effects", [])
        if not isinstance(side, list):
            bad(where, "side_effects is not an array")
        elif not set(side) <= set(caps):
            bad(where, f"side_effects {sorted(set(side) - set(caps))} are not among capabilities")
        for field in ("policy_tags", "owners"):
            if field in s and not (isinstance(s[field], list) and all(isinstance(x, str) for x in s[field])):
                bad(where, f"{field} is not an array of strings")
        if "rate_limit" in s:
            rl = s["rate_limit"]
            if not isinstance(rl, dict) or not isinstance(rl.get("max_per_minute"), int):
                bad(where, "rate_limit needs integer max_per_minute")
        if "redaction" in s:
            r = s["redaction"]
            if not isinstance(r, dict) or not isinstance(r.get("inputs"), list) or not isinstance(r.get("outputs"), list):
                bad(where, "redaction needs inputs and outputs lists")
        if s.get("status") == "deprecated":
            d = s.get("deprecation")
            if not isinstance(d, dict) or d.get("deprecated") is not True:
                bad(where, "deprecated skill without deprecation metadata (deprecated: true)")
            else:
                if "removal_version" in d and not SEMVER.match(str(d["removal_version"])):
                    bad(where, "deprecation.removal_version is not semver")
                if not d.get("notes"):
                    bad(where, "deprecation without migration notes")
        if s.get("kind") == "logic":
            ep = s.get("entrypoint")
            if not isinstance(ep, dict) or "runtime" not in ep:
                bad(where, "logic skill without entrypoint.runtime")
            elif ep["runtime"] in ("python", "native") and not (ep.get("module") and ep.get("handler")):
                bad(where, f"{ep['runtime']} entrypoint needs module and handler")
            if not isinstance(s.get("call_targets"), list):
                bad(where, "logic skill without call_targets")
            if "steps" in s:
                bad(where, "logic skill with steps")
        if s.get("kind") == "pipeline":
            if not isinstance(s.get("steps"), list):
                bad(where, "pipeline skill without steps")
            if "entrypoint" in s:
                bad(where, "pipeline skill with an entrypoint")
        key = (s.get("name"), s.get("version"))
        if key in names:
            bad(where, "defined twice")
        names[key] = s
    for s in skills:
        if not isinstance(s, dict):
            continue
        where = f"skill {s.get('name')}@{s.get('version')}"
        for t in s.get("call_targets") or []:
            if t.get("kind") not in ("skill", "op"):
                bad(where, f"call target kind {t.get('kind')!r}")
            elif t["kind"] == "skill":
                if not any(n == t.get("name") and (t.get("version") in (None, v)) for (n, v) in names):
                    bad(where, f"call target {t.get('name')}@{t.get('version')} is not in the registry")
        dep = s.get("deprecation") or {}
        if dep.get("replaced_by") and not any(n == dep["replaced_by"] for (n, _) in names):
            bad(where, f"replaced_by {dep['replaced_by']!r} is not in the registry")
    return problems


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        registry = json.load(f)
    catalog = None
    if len(argv) == 3:
        with open(argv[2], encoding="utf-8") as f:
            catalog = json.load(f)
    problems = validate(registry, catalog)
    for p in problems:
        print(p)
    print(f"{len(registry.get('skills', []))} skills checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
