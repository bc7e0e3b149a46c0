//! Generating the schemas of a skill's input and output types with `schemars`:
//! draft 2020-12, one self-contained schema per side.

use std::borrow::Cow;
use std::cell::Cell;

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The schema of what a caller may send as `T`, self-contained: its own `$defs`,
/// no references outside it. Fields with defaults are optional.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    input_schema(RootFns::of::<T>())
}

/// The schema of what serializing `T` produces: every field that is always
/// written is required, so consumers can rely on it.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    output_schema(RootFns::of::<T>())
}

/// [`input_schema_for`] from the type's pointers: what a registry entry keeps,
/// so no schema function is compiled per skill.
pub(crate) fn input_schema(fns: &'static RootFns) -> Value {
    root_schema(SchemaSettings::draft2020_12().for_deserialize(), fns)
}

/// [`output_schema_for`] from the type's pointers.
pub(crate) fn output_schema(fns: &'static RootFns) -> Value {
    root_schema(SchemaSettings::draft2020_12().for_serialize(), fns)
}

/// The `JsonSchema` functions of one type, as pointers.
///
/// `SchemaGenerator::into_root_schema_for::<T>` is a sizeable generic function;
/// instantiated for the input and output type of every skill, it was a tenth of
/// the code a skills crate compiles. The root is therefore generated through one
/// non-generic stand-in type, [`Root`], whose `JsonSchema` methods forward to the
/// pointers of the type being generated. Everything below the root goes through
/// the type's own derived impl, exactly as before.
pub(crate) struct RootFns {
    name: fn() -> Cow<'static, str>,
    id: fn() -> Cow<'static, str>,
    inline: fn() -> bool,
    json_schema: fn(&mut SchemaGenerator) -> Schema,
}

impl RootFns {
    pub(crate) const fn of<T: JsonSchema>() -> &'static RootFns {
        const {
            &RootFns {
                name: T::schema_name,
                id: T::schema_id,
                inline: T::inline_schema,
                json_schema: T::json_schema,
            }
        }
    }
}

thread_local! {
    /// The type [`Root`] stands for while [`root_schema`] runs on this thread.
    static ROOT: Cell<Option<&'static RootFns>> = const { Cell::new(None) };
}

fn root_schema(settings: SchemaSettings, fns: &'static RootFns) -> Value {
    // Restore the previous value on the way out, so a `JsonSchema` impl that
    // itself builds a root schema (unusual, but legal) does not confuse the outer one.
    struct Restore(Option<&'static RootFns>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ROOT.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(ROOT.with(|r| r.replace(Some(fns))));
    let schema: Schema = settings.into_generator().into_root_schema_for::<Root>();
    schema.to_value()
}

/// Stands for the type whose root schema is being generated; see [`RootFns`].
struct Root;

impl Root {
    fn fns() -> &'static RootFns {
        match ROOT.with(Cell::get) {
            Some(fns) => fns,
            // Only `root_schema` names `Root`, and it sets the pointers first.
            None => unreachable!("`Root` used outside `root_schema`"),
        }
    }
}

impl JsonSchema for Root {
    fn inline_schema() -> bool {
        (Root::fns().inline)()
    }

    fn schema_name() -> Cow<'static, str> {
        (Root::fns().name)()
    }

    fn schema_id() -> Cow<'static, str> {
        (Root::fns().id)()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        (Root::fns().json_schema)(generator)
    }
}
