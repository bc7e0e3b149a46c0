//! The context a skill runs in: resources reachable through declared capabilities,
//! the invocation's identity, and calls to other skills.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::SystemTime;

use crate::capability::{Calls, Capability, Declares};
use crate::manifest::{AgentRole, PermissionLevel};
use crate::skill::Skill;

/// Shared values that capabilities grant access to (database handles, HTTP clients,
/// file roots, caches, ...), keyed by type.
#[derive(Clone, Default)]
pub struct Resources {
    map: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>,
}

impl Resources {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `value`; a capability whose `Resource` is `R` grants access to it.
    pub fn with<R: Send + Sync + 'static>(mut self, value: R) -> Self {
        self.insert(value);
        self
    }

    pub fn insert<R: Send + Sync + 'static>(&mut self, value: R) {
        self.map.insert(
            TypeId::of::<R>(),
            (Arc::new(value), std::any::type_name::<R>()),
        );
    }

    pub fn contains(&self, ty: TypeId) -> bool {
        ty == TypeId::of::<()>() || self.map.contains_key(&ty)
    }

    fn get<R: 'static>(&self) -> Option<&R> {
        if let Some(unit) = (&() as &dyn Any).downcast_ref::<R>() {
            return Some(unit);
        }
        self.map.get(&TypeId::of::<R>())?.0.downcast_ref()
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<_> = self.map.values().map(|(_, n)| *n).collect();
        names.sort_unstable();
        f.debug_set().entries(names).finish()
    }
}

/// Who is calling: an agent role and the permission level it was granted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    pub agent_role: Option<AgentRole>,
    pub permission_level: Option<PermissionLevel>,
    pub user_id: Option<String>,
}

/// Per-invocation data shared by a skill and the skills it calls.
#[derive(Debug)]
pub(crate) struct Invocation {
    pub(crate) resources: Arc<Resources>,
    pub(crate) caller: Caller,
    pub(crate) trace_id: String,
    pub(crate) job_id: String,
    pub(crate) started_at: SystemTime,
}

/// The context of skill `S`. It hands out a capability's resource only when `S`
/// declares that capability, and calls only the skills `S` declares as call targets.
pub struct Ctx<S> {
    inv: Arc<Invocation>,
    _skill: PhantomData<fn() -> S>,
}

impl<S> Clone for Ctx<S> {
    fn clone(&self) -> Self {
        Ctx {
            inv: self.inv.clone(),
            _skill: PhantomData,
        }
    }
}

impl<S> fmt::Debug for Ctx<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("skill", &std::any::type_name::<S>())
            .field("trace_id", &self.inv.trace_id)
            .field("job_id", &self.inv.job_id)
            .finish_non_exhaustive()
    }
}

impl<S> Ctx<S> {
    /// Only the runtime builds contexts, after checking that every resource the
    /// skill's capabilities grant is registered.
    pub(crate) fn new(inv: Arc<Invocation>) -> Self {
        Ctx {
            inv,
            _skill: PhantomData,
        }
    }

    /// The resource granted by capability `C`, which `S` must declare.
    pub fn resource<C: Capability>(&self) -> &C::Resource
    where
        S: Declares<C>,
    {
        match self.inv.resources.get::<C::Resource>() {
            Some(r) => r,
            // The runtime refuses to start when a declared capability's resource is
            // missing (`Runtime::new`), so this is a bug in the runtime, not input.
            None => unreachable!(
                "resource `{}` of capability `{}` checked at runtime start",
                std::any::type_name::<C::Resource>(),
                C::INFO.id
            ),
        }
    }

    /// Call skill `T`, which `S` must declare in `calls(...)`. `#[skill]` checks
    /// there that `S` declares every capability of `T` ([`CallableBy`]), so the
    /// rule is reported once, at the declaration.
    ///
    /// [`CallableBy`]: crate::CallableBy
    pub async fn call<T: Skill>(&self, input: T::Input) -> Result<T::Output, T::Error>
    where
        S: Calls<T>,
    {
        T::run(Ctx::new(self.inv.clone()), input).await
    }

    pub fn caller(&self) -> &Caller {
        &self.inv.caller
    }

    pub fn trace_id(&self) -> &str {
        &self.inv.trace_id
    }

    pub fn job_id(&self) -> &str {
        &self.inv.job_id
    }

    /// When the runtime started this invocation; handlers never compute it.
    pub fn started_at(&self) -> SystemTime {
        self.inv.started_at
    }
}
