//! Skills and ops of registry values by name, and the targets steps and call
//! targets name.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::registry::json::str_of;

/// Skills and ops by name, each name's versions highest first.
pub(super) struct Index<'a> {
    pub(super) skills: BTreeMap<&'a str, Vec<(&'a Value, semver::Version)>>,
    pub(super) ops: BTreeMap<&'a str, Vec<(&'a Value, semver::Version)>>,
}

impl<'a> Index<'a> {
    pub(super) fn new(skills: &'a [Value], ops: &'a [Value]) -> Self {
        let group = |items: &'a [Value]| {
            let mut map: BTreeMap<&str, Vec<(&Value, semver::Version)>> = BTreeMap::new();
            for v in items {
                let version = semver::Version::parse(str_of(v, "version"))
                    .unwrap_or(semver::Version::new(0, 0, 0));
                map.entry(str_of(v, "name")).or_default().push((v, version));
            }
            for versions in map.values_mut() {
                versions.sort_by(|a, b| b.1.cmp(&a.1));
            }
            map
        };
        Index {
            skills: group(skills),
            ops: group(ops),
        }
    }

    /// A `{kind, name, version?}` target: the named version, else the highest.
    pub(super) fn target(&self, target: &Value) -> Result<(&'a Value, bool), String> {
        let kind = str_of(target, "kind");
        let name = str_of(target, "name");
        let version = target.get("version").and_then(Value::as_str);
        let (map, what) = match kind {
            "skill" => (&self.skills, "skill"),
            "op" => (&self.ops, "op"),
            other => return Err(format!("target kind `{other}` is neither `skill` nor `op`")),
        };
        let shown = match version {
            Some(v) => format!("{what} `{name}@{v}`"),
            None => format!("{what} `{name}`"),
        };
        let versions = map.get(name).map(Vec::as_slice).unwrap_or_default();
        let found = match version {
            None => versions.first(),
            Some(v) => {
                let parsed = semver::Version::parse(v).ok();
                versions
                    .iter()
                    .find(|(_, have)| Some(have) == parsed.as_ref())
            }
        };
        match found {
            Some((v, _)) => Ok((v, kind == "op")),
            None if what == "op" && map.is_empty() => Err(format!(
                "{shown} is not in the registry, which has no ops (pass the op registry: --ops FILE)"
            )),
            None if versions.is_empty() => Err(format!("{shown} is not in the registry")),
            None => Err(format!(
                "{shown} is not in the registry (versions: {})",
                versions
                    .iter()
                    .map(|(_, v)| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}
