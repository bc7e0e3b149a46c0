//! Schema generation, compilation and residuals, checked together on the
//! types they are made for.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use crate::schema::compiled::CompiledSchema;
use crate::schema::generate::{input_schema_for, output_schema_for};
use crate::schema::residual::{implied_by_type, residual, shapes_only_at_the_top};

#[derive(Serialize, JsonSchema)]
struct Plain {
    count: u32,
    small: u8,
    signed: i64,
    label: String,
    tags: Vec<String>,
    flag: bool,
    inner: Option<Inner>,
    map: std::collections::BTreeMap<String, Inner>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Inner {
    /// Documented.
    n: u64,
}

#[derive(Serialize, JsonSchema)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

#[derive(Serialize, JsonSchema)]
struct Bounded {
    #[schemars(length(max = 3))]
    label: String,
}

#[derive(Serialize, JsonSchema)]
struct Float {
    ratio: f64,
}

#[derive(Serialize, JsonSchema)]
struct Email {
    #[schemars(email)]
    to: String,
}

#[derive(Serialize, JsonSchema)]
struct Narrow {
    #[schemars(range(min = 1))]
    count: u32,
}

#[derive(Serialize, JsonSchema)]
#[allow(dead_code)] // only its schema is used
enum Mode {
    Fast,
    Slow,
}

#[derive(Serialize, JsonSchema)]
struct WithMode {
    mode: Mode,
}

#[test]
fn shapes_the_type_guarantees_are_implied() {
    let plain = output_schema_for::<Plain>();
    assert!(implied_by_type(&plain), "{plain:#}");
    let tree = output_schema_for::<Tree>();
    assert!(implied_by_type(&tree), "recursive: {tree:#}");
}

#[test]
fn constraints_beyond_the_type_are_not() {
    for (what, schema) in [
        ("a length", output_schema_for::<Bounded>()),
        (
            "a float (NaN serializes as null)",
            output_schema_for::<Float>(),
        ),
        ("a format", output_schema_for::<Email>()),
        ("a range narrower than u32", output_schema_for::<Narrow>()),
        ("an enum", output_schema_for::<WithMode>()),
        ("a dangling reference", json!({"$ref": "#/$defs/Missing"})),
        ("`false`", json!(false)),
    ] {
        assert!(!implied_by_type(&schema), "{what}: {schema}");
    }
}

#[derive(Serialize, JsonSchema)]
struct Named {
    #[schemars(length(max = 3))]
    name: String,
    children: Vec<Named>,
    inner: Option<Inner>,
}

#[derive(Serialize, JsonSchema)]
struct MaybeNamed {
    child: Option<Named>,
}

#[derive(Serialize, JsonSchema)]
#[allow(dead_code)] // only its schema is used
enum Shape {
    Circle { radius: u32 },
    Square { side: u32 },
}

#[derive(Serialize, JsonSchema)]
struct WithShape {
    shape: Shape,
}

fn without_dialect(mut schema: serde_json::Value) -> serde_json::Value {
    schema.as_object_mut().unwrap().remove("$schema");
    schema
}

#[test]
fn a_residual_keeps_only_what_the_type_does_not_guarantee() {
    assert_eq!(residual(&output_schema_for::<Plain>()), None);
    assert_eq!(residual(&output_schema_for::<Tree>()), None);
    let bounded = residual(&input_schema_for::<Bounded>()).unwrap();
    assert_eq!(
        without_dialect(bounded),
        json!({"properties": {"label": {"maxLength": 3}}})
    );
    let narrow = residual(&output_schema_for::<Narrow>()).unwrap();
    assert_eq!(
        without_dialect(narrow),
        json!({"properties": {"count": {"minimum": 1}}})
    );
    // The recursion stays; the reference to a definition with nothing left
    // to check goes.
    let named = residual(&output_schema_for::<Named>()).unwrap();
    assert_eq!(
        without_dialect(named),
        json!({"properties": {
            "name": {"maxLength": 3},
            "children": {"items": {"$ref": "#"}},
        }})
    );
}

#[test]
fn an_option_is_reduced_under_each_alternatives_type() {
    let schema = output_schema_for::<MaybeNamed>();
    let left = without_dialect(residual(&schema).unwrap());
    assert_eq!(
        left["properties"],
        json!({"child": {"anyOf": [
            {"$ref": "#/$defs/Named", "type": "object"},
            {"type": "null"},
        ]}}),
        "{left:#}"
    );
    assert_eq!(
        left["$defs"]["Named"]["properties"]["name"],
        json!({"maxLength": 3})
    );
    // Alternatives of one JSON type cannot be told apart by it.
    let same_type = json!({"anyOf": [
        {"type": "string", "maxLength": 2},
        {"type": "string", "pattern": "^x"},
    ]});
    assert_eq!(residual(&same_type), Some(same_type));
}

#[test]
fn decoding_checks_the_shapes_of_flat_schemas_only() {
    assert!(shapes_only_at_the_top(&input_schema_for::<Bounded>()));
    assert!(shapes_only_at_the_top(&input_schema_for::<Narrow>()));
    for (what, schema) in [
        ("a nested struct", input_schema_for::<Plain>()),
        ("a recursive struct", input_schema_for::<Named>()),
        ("an optional struct", input_schema_for::<MaybeNamed>()),
        (
            "an object under an annotation's name",
            json!({"type": "object", "properties": {"default": {"type": "object"}}}),
        ),
    ] {
        assert!(!shapes_only_at_the_top(&schema), "{what}: {schema}");
    }
}

#[test]
fn what_a_residual_cannot_reduce_it_keeps_whole() {
    let schema = output_schema_for::<WithShape>();
    assert_eq!(residual(&schema), Some(schema));
    // Named properties stay named (as `true`), or the remaining
    // `additionalProperties` would apply to them.
    let map = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "string", "maxLength": 2},
    });
    assert_eq!(
        residual(&map),
        Some(json!({
            "properties": {"a": true},
            "additionalProperties": {"maxLength": 2},
        }))
    );
}

/// On values of the schema's type, the residual and the whole schema agree.
#[test]
fn on_values_of_the_type_the_residual_decides_as_the_schema_does() {
    let named = |name: &str, children| Named {
        name: name.into(),
        children,
        inner: Some(Inner { n: 1 }),
    };
    let cases = [
        (
            output_schema_for::<Named>(),
            vec![
                json!(named("ok", vec![named("ok", vec![])])),
                json!(named("ok", vec![named("too long", vec![])])),
                json!(named("too long", vec![])),
            ],
        ),
        (
            output_schema_for::<MaybeNamed>(),
            vec![
                json!(MaybeNamed { child: None }),
                json!(MaybeNamed {
                    child: Some(named("ok", vec![]))
                }),
                json!(MaybeNamed {
                    child: Some(named("ok", vec![named("too long", vec![])]))
                }),
            ],
        ),
        (
            output_schema_for::<Bounded>(),
            vec![
                json!(Bounded {
                    label: "abc".into()
                }),
                json!(Bounded {
                    label: "abcd".into()
                }),
            ],
        ),
        (
            output_schema_for::<Narrow>(),
            vec![json!(Narrow { count: 0 }), json!(Narrow { count: 1 })],
        ),
        (
            output_schema_for::<Email>(),
            vec![
                json!(Email {
                    to: "a@example.com".into()
                }),
                json!(Email {
                    to: "not an address".into()
                }),
            ],
        ),
    ];
    for (schema, values) in cases {
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(!compiled.implied_by_type());
        let verdicts: Vec<_> = values.iter().map(|v| compiled.is_valid(v)).collect();
        assert!(
            verdicts.contains(&true) && verdicts.contains(&false),
            "{schema}"
        );
        for (value, valid) in values.iter().zip(verdicts) {
            assert_eq!(
                compiled.is_valid_for_type(value),
                valid,
                "{value} against {schema}"
            );
        }
    }
}

/// A field whose residual is only length bounds is checked by counting, and
/// decides as the validator does: in code points, not bytes, at and around
/// each bound. Anything more than length bounds goes to the validator.
#[test]
fn length_bounds_are_counted_as_the_schema_counts_them() {
    use crate::schema::compiled::FieldCheck;

    let strings = [
        "",
        "a",
        "ab",
        "abc",
        "é",
        "éé",
        "ééé",
        "日本",
        "日本語",
        "𝄞",
        "𝄞𝄞",
        "𝄞𝄞𝄞",
        "aé日𝄞",
    ];
    let bounds = [
        json!({"maxLength": 2}),
        json!({"minLength": 2}),
        json!({"minLength": 1, "maxLength": 2}),
        json!({"minLength": 3, "maxLength": 3}),
        json!({"maxLength": 0}),
    ];
    for bound in bounds {
        let mut field = bound.clone();
        field["type"] = json!("string");
        let schema = json!({
            "type": "object",
            "properties": {"s": field},
            "required": ["s"],
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let [(name, check)] = compiled.residual_fields().expect("one field") else {
            panic!("one field for {bound}");
        };
        assert_eq!(name, "s");
        assert!(matches!(check, FieldCheck::Length { .. }), "{bound}");
        for s in strings {
            let value = json!(s);
            assert_eq!(
                check.is_valid(&value),
                jsonschema::is_valid(&bound, &value),
                "{s:?} against {bound}"
            );
        }
    }
    // A bound written as a float (valid JSON Schema), or a bound with
    // another keyword, goes to the validator.
    for (field, valid, invalid) in [
        (json!({"type": "string", "maxLength": 2.0}), "éé", "ééé"),
        (
            json!({"type": "string", "maxLength": 2, "pattern": "^a"}),
            "ab",
            "ba",
        ),
    ] {
        let schema = json!({"type": "object", "properties": {"s": field}, "required": ["s"]});
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let [(_, check)] = compiled.residual_fields().expect("one field") else {
            panic!("one field for {field}");
        };
        assert!(matches!(check, FieldCheck::Schema(_)), "{field}");
        assert!(check.is_valid(&json!(valid)), "{valid:?} against {field}");
        assert!(
            !check.is_valid(&json!(invalid)),
            "{invalid:?} against {field}"
        );
    }
}
