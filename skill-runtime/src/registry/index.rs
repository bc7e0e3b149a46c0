//! A built registry and how jobs find their skill in it: by name, and by
//! version when one is asked for.

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use skill_core::capability::CapabilityInfo;
use skill_core::manifest::TargetKind;

use crate::model::envelope::split_reference;
use crate::registry::skill::{RegisteredSkill, crate_of};

/// Registered names to their versions' indexes, lowest version first.
type NameMap = HashMap<&'static str, Vec<usize>, BuildHasherDefault<NameHasher>>;

/// FNV-1a, for the name lookup every job starts with. The table holds only
/// registered names, so a caller choosing lookup keys cannot lengthen its
/// chains: SipHash's flooding protection buys nothing here, and it cost more
/// than the rest of the lookup.
struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Every skill and capability, sorted, checked and with compiled schemas.
#[derive(Debug)]
pub struct Registry {
    skills: Vec<RegisteredSkill>,
    catalog: Vec<&'static CapabilityInfo>,
    /// Index into `skills` of every version of a name, lowest version first.
    by_name: NameMap,
    /// Likewise for ops (a separate namespace).
    ops_by_name: NameMap,
    /// Intents to the skill that serves them (`intents(...)`).
    by_intent: HashMap<&'static str, &'static str, BuildHasherDefault<NameHasher>>,
}

impl Registry {
    /// The registry of `skills`, sorted and checked (see
    /// [`Registry::build`](crate::registry::build)), and `catalog`.
    pub(crate) fn assemble(
        skills: Vec<RegisteredSkill>,
        catalog: Vec<&'static CapabilityInfo>,
    ) -> Registry {
        let mut by_name = NameMap::default();
        let mut ops_by_name = NameMap::default();
        let mut by_intent = HashMap::default();
        for (i, s) in skills.iter().enumerate() {
            let map = if s.is_op() {
                &mut ops_by_name
            } else {
                &mut by_name
            };
            map.entry(s.name()).or_default().push(i);
            if !s.is_op() {
                for intent in s.entry.manifest.intents {
                    by_intent.insert(*intent, s.name());
                }
            }
        }
        Registry {
            skills,
            catalog,
            by_name,
            ops_by_name,
            by_intent,
        }
    }

    /// All skills, sorted by name then version, then all ops likewise.
    pub fn skills(&self) -> &[RegisteredSkill] {
        &self.skills
    }

    /// Every capability of the linked crates, sorted by id.
    pub fn catalog(&self) -> &[&'static CapabilityInfo] {
        &self.catalog
    }

    /// Resolve `name` or `name@version`; without a version, the highest one.
    pub fn get(&self, reference: &str) -> Option<&RegisteredSkill> {
        let (name, version) = split_reference(reference);
        self.index_of(name, version).ok().map(|i| &self.skills[i])
    }

    /// The index in [`Registry::skills`] of `name` at `version` (the highest
    /// version when `None`); on failure, the versions of `name` that exist (empty
    /// when there is no skill of that name).
    pub fn index_of(&self, name: &str, version: Option<&str>) -> Result<usize, Vec<String>> {
        self.index_of_kind(TargetKind::Skill, name, version)
    }

    /// The index of the highest version of the skill that serves `intent`: the
    /// one whose manifest lists it in `intents(...)`, else the skill named like
    /// the intent.
    pub fn index_of_intent(&self, intent: &str) -> Option<usize> {
        let name = self.by_intent.get(intent).copied().unwrap_or(intent);
        self.index_of(name, None).ok()
    }

    /// [`Registry::index_of`] for a skill or an op.
    pub fn index_of_kind(
        &self,
        kind: TargetKind,
        name: &str,
        version: Option<&str>,
    ) -> Result<usize, Vec<String>> {
        let map = match kind {
            TargetKind::Skill => &self.by_name,
            TargetKind::Op => &self.ops_by_name,
        };
        let Some(versions) = map.get(name) else {
            return Err(Vec::new());
        };
        let found = match version {
            None => versions.last().copied(),
            // The version as written in the manifest (what exports and MCP
            // routes carry) matches without parsing; other spellings of the
            // same version (`1.0.0+build`) go through semver.
            Some(v) => versions
                .iter()
                .copied()
                .find(|&i| self.skills[i].entry.manifest.version == v)
                .or_else(|| {
                    let v = semver::Version::parse(v).ok()?;
                    versions
                        .iter()
                        .copied()
                        .find(|&i| self.skills[i].version == v)
                }),
        };
        found.ok_or_else(|| {
            versions
                .iter()
                .map(|&i| self.skills[i].version.to_string())
                .collect()
        })
    }

    /// The names of the crates that contributed at least one skill or capability.
    pub fn contributing_crates(&self) -> BTreeSet<&'static str> {
        let mut crates: BTreeSet<&'static str> = self
            .skills
            .iter()
            .map(RegisteredSkill::crate_name)
            .collect();
        crates.extend(self.catalog.iter().map(|c| crate_of(c.rust_path)));
        crates
    }
}
