"""``skill-registry`` (or ``python -m skill_registry``), the package's command line:

    skill-registry check REGISTRY    load it, every contract checked; print the skills
    skill-registry ground REGISTRY   JSON lines of calls on stdin, one answer per line
    skill-registry models REGISTRY   Pydantic models of every skill's input and output
"""

from __future__ import annotations

import json
import sys

from . import RegistryError, SkillRegistry


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("check", "ground", "models"):
        print("usage: skill-registry check|ground|models REGISTRY", file=sys.stderr)
        return 2
    command, path = args
    try:
        registry = SkillRegistry.from_file(path)
    except RegistryError as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 2
    if command == "check":
        for contract in registry.contracts:
            print(contract["skill_id"])
    elif command == "models":
        from ._models import models_of

        sys.stdout.write(models_of(registry))
    else:
        out = sys.stdout
        for line in sys.stdin:
            if line.strip():
                out.write(json.dumps(registry.ground(json.loads(line)).to_dict()) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # A reader that went away (`| head`) ends the command quietly.
        sys.stderr.close()
        sys.exit(0)
