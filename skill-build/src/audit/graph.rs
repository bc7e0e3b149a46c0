//! The compiled program as a graph: one node per function or data section
//! of the rlibs' object files (rustc puts each in a section of its own), one
//! edge per relocation, so a call, a function's address taken (a function
//! pointer) and a vtable's entries are all edges. Objects are read when a
//! walk first needs a symbol they define, found through each rlib's archive
//! index; a symbol no rlib defines (`std`, the C library) is a leaf.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SectionKind, SymbolKind};

use super::effects::{classify_as, subject, trusted};

/// A node's index in [`Program::nodes`].
pub type NodeId = usize;

/// A function, a data section (a vtable, a table of function pointers), or
/// a symbol defined outside the rlibs read.
pub struct Node {
    /// The demangled name without its hash (`std::fs::write::inner`).
    pub name: String,
    /// A data section: a path through it is a possible one.
    pub data: bool,
    /// Which rlib defines it (`None`: outside them).
    pub archive: Option<usize>,
    /// What the walks need of the name, worked out once, when a walk first
    /// reaches the node.
    facts: OnceCell<Facts>,
    refs: Vec<Ref>,
}

/// A node's name, as the walk reads it.
struct Facts {
    /// The path it is named by ([`subject`]).
    subject: String,
    /// The ambient kind it reaches, if it is effectful.
    kind: Option<&'static str>,
    /// The runtime's own code.
    trusted: bool,
}

impl Node {
    fn new(name: String, data: bool, archive: Option<usize>) -> Node {
        Node {
            name,
            data,
            archive,
            facts: OnceCell::new(),
            refs: Vec::new(),
        }
    }

    fn facts(&self) -> &Facts {
        self.facts.get_or_init(|| {
            let subject = subject(&self.name);
            Facts {
                kind: classify_as(&self.name, &subject),
                trusted: trusted(&subject),
                subject,
            }
        })
    }

    /// The path it is named by: `T::method` for `<T as Trait>::method`.
    pub fn subject(&self) -> &str {
        &self.facts().subject
    }
}

enum Ref {
    Node(NodeId),
    Global(String),
}

/// An rlib: where it is, and where each of its object files lies in it (the
/// file is read again for each object the walk needs, so that memory holds
/// only those).
struct Archive {
    path: PathBuf,
    /// (start, size) of each object file's bytes, sorted.
    members: Vec<(u64, u64)>,
}

/// The rlibs of one build, read on demand.
#[derive(Default)]
pub struct Program {
    archives: Vec<Archive>,
    /// Global symbol -> (archive, object file's range), from the archive
    /// indexes.
    index: HashMap<String, (usize, (u64, u64))>,
    loaded: HashSet<(usize, u64)>,
    defined: HashMap<String, NodeId>,
    /// Every node read so far.
    pub nodes: Vec<Node>,
    /// How many object files the rlibs hold.
    pub objects: usize,
    /// The rlibs of the runtime's own crates: only code they hold is
    /// trusted. Their generic code instantiated for a user's types lies in
    /// the user's rlib and is read like the user's (it may run the user's
    /// code: a field's `deserialize_with`, a `Display`).
    own: HashSet<usize>,
}

/// An effect a walk reached: its kind and the path from a root to it.
pub struct Reach {
    /// `file_write`, `network`, ...
    pub kind: &'static str,
    /// The nodes from a root to the effectful function.
    pub path: Vec<NodeId>,
    /// The path passes through a vtable or a function table.
    pub possible: bool,
}

impl Program {
    /// Index the rlibs at `paths`.
    pub fn open(paths: &[PathBuf]) -> Result<Program, String> {
        let mut program = Program::default();
        for path in paths {
            let file = std::fs::File::open(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let cache = object::read::ReadCache::new(file);
            let archive = ArchiveFile::parse(&cache).map_err(|e| bad(path, e))?;
            let mut members = Vec::new();
            for member in archive.members() {
                let member = member.map_err(|e| bad(path, e))?;
                if member.name().ends_with(b".o") {
                    members.push(member.file_range());
                }
            }
            members.sort_unstable();
            program.objects += members.len();
            let i = program.archives.len();
            if let Some(symbols) = archive.symbols().map_err(|e| bad(path, e))? {
                for symbol in symbols {
                    let symbol = symbol.map_err(|e| bad(path, e))?;
                    // The index gives the member's header; its bytes are the
                    // first object file after it.
                    let at = members.partition_point(|(start, _)| *start <= symbol.offset().0);
                    if let Some(range) = members.get(at) {
                        let name = String::from_utf8_lossy(symbol.name()).into_owned();
                        program.index.entry(name).or_insert((i, *range));
                    }
                }
            }
            program.archives.push(Archive {
                path: path.clone(),
                members,
            });
        }
        Ok(program)
    }

    /// Trust the runtime's code the rlib at `archive` holds (see
    /// [`trusted`]).
    pub fn trust(&mut self, archive: usize) {
        self.own.insert(archive);
    }

    /// Read every object of the rlib at `archive` and give its nodes.
    pub fn load_all(&mut self, archive: usize) -> Result<Vec<NodeId>, String> {
        let start = self.nodes.len();
        for range in self.archives[archive].members.clone() {
            self.load(archive, range)?;
        }
        Ok((start..self.nodes.len())
            .filter(|n| self.nodes[*n].archive == Some(archive))
            .collect())
    }

    /// Read one object file (the bytes at `range` of an rlib), once.
    fn load(&mut self, archive: usize, range: (u64, u64)) -> Result<(), String> {
        if !self.loaded.insert((archive, range.0)) {
            return Ok(());
        }
        let path = &self.archives[archive].path;
        let read = || -> std::io::Result<Vec<u8>> {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = std::fs::File::open(path)?;
            file.seek(SeekFrom::Start(range.0))?;
            // A fresh allocation is aligned as the ELF reader wants (the
            // system allocator aligns to 16; archive members only to 2).
            let mut bytes = vec![0; usize::try_from(range.1).unwrap_or(usize::MAX)];
            file.read_exact(&mut bytes)?;
            Ok(bytes)
        };
        let bytes = read().map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let obj = object::File::parse(&*bytes).map_err(|e| bad(path, e))?;
        // One node per code or data section, named by its symbol.
        let mut by_section: HashMap<usize, NodeId> = HashMap::new();
        let mut names: HashMap<usize, String> = HashMap::new();
        for symbol in obj.symbols() {
            if let (Some(section), SymbolKind::Text | SymbolKind::Data) =
                (symbol.section_index(), symbol.kind())
                && let Ok(name) = symbol.name()
                && !name.is_empty()
            {
                let entry = names.entry(section.0).or_default();
                if entry.is_empty() || symbol.is_global() {
                    *entry = name.to_owned();
                }
            }
        }
        let mut pending = Vec::new();
        for section in obj.sections() {
            let data = match section.kind() {
                SectionKind::Text => false,
                SectionKind::Data
                | SectionKind::ReadOnlyData
                | SectionKind::ReadOnlyDataWithRel => true,
                _ => continue,
            };
            let mangled = names
                .get(&section.index().0)
                .cloned()
                .unwrap_or_else(|| section.name().unwrap_or_default().to_owned());
            let id = self.nodes.len();
            self.nodes
                .push(Node::new(demangle(&mangled), data, Some(archive)));
            by_section.insert(section.index().0, id);
            pending.push((id, section.index()));
        }
        for symbol in obj.symbols() {
            if symbol.is_global()
                && !symbol.is_undefined()
                && let (Some(section), Ok(name)) = (symbol.section_index(), symbol.name())
                && let Some(node) = by_section.get(&section.0)
            {
                self.defined.entry(name.to_owned()).or_insert(*node);
            }
        }
        for (id, index) in pending {
            let section = obj
                .section_by_index(index)
                .map_err(|e| bad(&self.archives[archive].path, e))?;
            let mut refs = Vec::new();
            for (_, relocation) in section.relocations() {
                let target = match relocation.target() {
                    RelocationTarget::Section(s) => by_section.get(&s.0).map(|n| Ref::Node(*n)),
                    RelocationTarget::Symbol(s) => {
                        let Ok(symbol) = obj.symbol_by_index(s) else {
                            continue;
                        };
                        if symbol.kind() == SymbolKind::Section || !symbol.is_undefined() {
                            symbol
                                .section_index()
                                .and_then(|s| by_section.get(&s.0))
                                .map(|n| Ref::Node(*n))
                        } else {
                            symbol.name().ok().map(|n| Ref::Global(n.to_owned()))
                        }
                    }
                    _ => None,
                };
                if let Some(t) = target
                    && !matches!(t, Ref::Node(n) if n == id)
                {
                    refs.push(t);
                }
            }
            self.nodes[id].refs = refs;
        }
        Ok(())
    }

    /// How many object files were read.
    pub fn read(&self) -> usize {
        self.loaded.len()
    }

    /// The node a global symbol names: read from the rlib that defines it,
    /// or a leaf when none does.
    fn resolve(&mut self, name: &str) -> Result<NodeId, String> {
        if let Some(n) = self.defined.get(name) {
            return Ok(*n);
        }
        if let Some((archive, range)) = self.index.get(name).copied() {
            self.load(archive, range)?;
            if let Some(n) = self.defined.get(name) {
                return Ok(*n);
            }
        }
        let id = self.nodes.len();
        self.nodes.push(Node::new(demangle(name), false, None));
        self.defined.insert(name.to_owned(), id);
        Ok(id)
    }

    /// The nodes `n` refers to. A global name is resolved once (reading the
    /// object that defines it), and kept resolved for later walks.
    fn targets(&mut self, n: NodeId) -> Result<Vec<NodeId>, String> {
        let refs = std::mem::take(&mut self.nodes[n].refs);
        let mut resolved = Vec::with_capacity(refs.len());
        for r in refs {
            resolved.push(match r {
                Ref::Node(id) => id,
                Ref::Global(name) => self.resolve(&name)?,
            });
        }
        self.nodes[n].refs = resolved.iter().map(|id| Ref::Node(*id)).collect();
        Ok(resolved)
    }

    /// Whether node `n` refers to one of `nodes` (calls it, takes its
    /// address).
    pub fn refers_to(&mut self, n: NodeId, nodes: &[NodeId]) -> Result<bool, String> {
        Ok(self.targets(n)?.iter().any(|t| nodes.contains(t)))
    }

    /// Walk from `roots`, breadth first, to every effectful function: one
    /// shortest path per kind. The walk does not enter the runtime's code,
    /// nor nodes `stop` names (other handlers, audited on their own), nor
    /// the methods of `resources` (a declared capability's resource types:
    /// their code is the capability's). A `std` function called from `std`'s
    /// platform layer (an `abort` in a destructor's debug check), which no
    /// user code can name, is `std`'s business, not the caller's.
    pub fn walk(
        &mut self,
        roots: &[NodeId],
        stop: &HashSet<NodeId>,
        resources: &[String],
    ) -> Result<Vec<Reach>, String> {
        let mut parent: HashMap<NodeId, Option<NodeId>> =
            roots.iter().map(|r| (*r, None)).collect();
        let mut queue: VecDeque<NodeId> = roots.iter().copied().collect();
        let mut found: Vec<Reach> = Vec::new();
        while let Some(n) = queue.pop_front() {
            let from_std = parent
                .get(&n)
                .copied()
                .flatten()
                .is_some_and(|p| self.nodes[p].subject().starts_with("std::sys::"));
            let facts = self.nodes[n].facts();
            if let Some(kind) = facts.kind.filter(|_| !from_std) {
                if !found.iter().any(|r| r.kind == kind) {
                    let mut path = vec![n];
                    while let Some(Some(p)) = parent.get(path.last().expect("a path")) {
                        path.push(*p);
                    }
                    path.reverse();
                    let possible = path.iter().any(|p| self.nodes[*p].data);
                    found.push(Reach {
                        kind,
                        path,
                        possible,
                    });
                }
                continue;
            }
            let own_resource = resources.iter().any(|r| {
                facts
                    .subject
                    .strip_prefix(r.as_str())
                    .is_some_and(|rest| rest.starts_with("::"))
            });
            let trusted =
                facts.trusted && self.nodes[n].archive.is_none_or(|a| self.own.contains(&a));
            if trusted || (stop.contains(&n) && !roots.contains(&n)) || own_resource {
                continue;
            }
            for next in self.targets(n)? {
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(next) {
                    e.insert(Some(n));
                    queue.push_back(next);
                }
            }
        }
        Ok(found)
    }
}

/// A symbol's Rust path without its hash; other names as they are.
pub fn demangle(mangled: &str) -> String {
    match rustc_demangle::try_demangle(mangled) {
        Ok(d) => format!("{d:#}"),
        Err(_) => mangled.to_owned(),
    }
}

fn bad(path: &Path, e: object::Error) -> String {
    format!("cannot read {}: {e}", path.display())
}
