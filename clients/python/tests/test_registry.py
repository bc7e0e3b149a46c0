"""The package's own tests, on the example registry (SKILL_REGISTRY, else the
repository's skill-registry.json). tests/consumers.rs runs them, and holds
``ground`` to the runtime's answers on generated calls."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

from skill_registry import RegistryError, SkillRegistry, validate_skill_contract

PATH = os.environ.get("SKILL_REGISTRY") or str(Path(__file__).parents[3] / "skill-registry.json")
VLEVEL = {"page_data": {"url": "https://shop.example.com/p/1", "gamme": "plaquettes", "marque": "renault"}}


class RegistryTests(unittest.TestCase):
    registry: SkillRegistry

    @classmethod
    def setUpClass(cls) -> None:
        cls.registry = SkillRegistry.from_file(PATH)

    def test_get_skill_by_name_and_by_name_at_version(self) -> None:
        self.assertEqual(self.registry.get_skill("vlevel_calculator")["skill_id"], "vlevel_calculator@1.0.0")
        self.assertEqual(self.registry.get_skill("vlevel_calculator@1.0.0")["metadata"]["name"], "V-Level Calculator")
        self.assertIsNone(self.registry.get_skill("vlevel_calculator@2.0.0"))
        self.assertIsNone(self.registry.get_skill("nope"))

    def test_a_valid_call_grounds_by_name_or_tool_name_as_text_or_value(self) -> None:
        for call in (
            {"name": "vlevel_calculator", "arguments": json.dumps(VLEVEL)},
            {"name": "ai_cos_vlevel_calc", "arguments": VLEVEL},
        ):
            answer = self.registry.ground(call)
            self.assertTrue(answer.ok, answer)
            assert answer.ok  # for the type checker
            self.assertEqual(answer.skill["skill_id"], "vlevel_calculator@1.0.0")
            self.assertFalse(answer.is_destructive)
            self.assertFalse(answer.requires_hitl)
            self.assertEqual(answer.arguments, VLEVEL)

    def test_invalid_arguments_are_refused_with_each_errors_path(self) -> None:
        wrong = self.registry.ground({"name": "vlevel_calculator", "arguments": {"page_data": {"url": "x", "gamme": 1}}})
        self.assertFalse(wrong.ok)
        self.assertEqual(wrong.code, "invalid_input")
        self.assertEqual([e.path for e in wrong.errors], ["/page_data/gamme"])
        missing = self.registry.ground({"name": "vlevel_calculator", "arguments": "{}"})
        self.assertEqual([e.path for e in missing.errors], [""])
        self.assertIn("page_data", missing.errors[0].message)
        bad_uri = self.registry.ground({"name": "canonical_check", "arguments": {"urls": ["https://ok.example/", "not a uri"]}})
        self.assertEqual([e.path for e in bad_uri.errors], ["/urls/1"])
        self.assertEqual(self.registry.ground({"name": "echo", "arguments": '{"message": '}).code, "malformed_json")

    def test_a_destructive_skill_that_needs_a_person_says_so(self) -> None:
        answer = self.registry.ground({"name": "rag_cache_purge", "arguments": {"namespace": "knowledge:faq"}})
        self.assertTrue(answer.ok, answer)
        assert answer.ok
        self.assertTrue(answer.is_destructive)
        self.assertTrue(answer.requires_hitl)

    def test_an_unknown_skill_is_refused(self) -> None:
        answer = self.registry.ground({"name": "drop_everything", "arguments": "{}"})
        self.assertFalse(answer.ok)
        self.assertEqual(answer.code, "unknown_skill")
        self.assertEqual(self.registry.ground({"arguments": "{}"}).code, "unknown_skill")

    def test_answers_read_with_the_typescript_packages_keys_too(self) -> None:
        purge = self.registry.ground({"name": "rag_cache_purge", "arguments": {"namespace": "knowledge:faq"}})
        self.assertTrue(purge["ok"] and purge["isDestructive"] and purge["requiresHitl"])
        wrong = self.registry.ground({"name": "echo", "arguments": {"message": 1}})
        self.assertEqual(wrong["errors"][0]["path"], "/message")
        self.assertEqual(self.registry.ground({"name": "echo", "arguments": {"x": float("nan")}}).code, "malformed_json")

    def test_contracts_are_checked_strictly(self) -> None:
        contract = copy.deepcopy(self.registry.get_skill("echo"))
        self.assertTrue(validate_skill_contract(contract).ok)
        del contract["constraints"]["sandbox_type"]
        missing = validate_skill_contract(contract)
        self.assertFalse(missing.ok)
        self.assertEqual([e.path for e in missing.errors], ["/constraints"])
        wrong = copy.deepcopy(self.registry.get_skill("echo"))
        wrong["constraints"]["is_destructive"] = "no"
        self.assertEqual([e.path for e in validate_skill_contract(wrong).errors], ["/constraints/is_destructive"])
        raw = json.loads(Path(PATH).read_text(encoding="utf-8"))
        raw["skills"][0]["constraints"]["requires_hitl"] = "maybe"
        with self.assertRaises(RegistryError):
            SkillRegistry.from_json(raw)

    def test_the_unified_export_loads_and_grounds_the_same(self) -> None:
        unified = SkillRegistry.from_json(self.registry.contracts)
        self.assertTrue(unified.ground({"name": "vlevel_calculator", "arguments": VLEVEL}).ok)
        purge = unified.ground({"name": "rag_cache_purge", "arguments": {"namespace": "knowledge:faq"}})
        assert purge.ok
        self.assertTrue(purge.requires_hitl)

    def test_models_validate_what_the_grounder_accepts(self) -> None:
        if importlib.util.find_spec("datamodel_code_generator") is None:
            self.skipTest("datamodel-code-generator is not installed (pip install skill-registry[models])")
        from skill_registry._models import models_of

        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "skill_models.py").write_text(models_of(self.registry), encoding="utf-8")
            sys.path.insert(0, tmp)
            try:
                import skill_models  # type: ignore[import-not-found]
            finally:
                sys.path.remove(tmp)
        model = skill_models.VlevelCalculatorInput.model_validate(VLEVEL)
        self.assertEqual(model.page_data.gamme, "plaquettes")
        with self.assertRaises(Exception):
            skill_models.CountSlowlyInput.model_validate({"to": 0, "step_ms": 1})


if __name__ == "__main__":
    unittest.main()
