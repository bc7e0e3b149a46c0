//! Cron schedules on Redis: the schedules workers registered and each one's
//! last tick, in one hash per queue (`{ns}:q:{queue}:schedules`: the
//! schedule's state by id, `{id}:last` its last tick and job). The ticks
//! themselves are queued by `queue::schedule`, once across the fleet.

use std::future::Future;

use redis::Value;

use crate::exec::policy::BoxFuture;
use crate::queue::api::QueueError;
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::reply::{items, text};
use crate::queue::schedule::{self, Board, ScheduleState, Schedules};

impl RedisBackend {
    /// The schedules workers registered on this queue, with their last and
    /// next runs.
    pub async fn schedules(&self) -> Result<Vec<ScheduleState>, QueueError> {
        schedule::states(self).await
    }

    /// Queue the ticks of `schedules` until `stop` completes (see
    /// [`queue::schedule`](crate::queue::schedule)). Every worker of a fleet
    /// may run this.
    pub async fn run_schedules(&self, schedules: &Schedules, stop: impl Future<Output = ()>) {
        schedule::run(self, schedules, stop).await
    }
}

impl Board for RedisBackend {
    fn queue_name(&self) -> &str {
        &self.inner.config.queue
    }

    fn register<'a>(&'a self, id: &'a str, state: String) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let cmd = redis::cmd("HSET")
                .arg(&self.inner.keys.schedules)
                .arg(id)
                .arg(state)
                .clone();
            self.inner.query::<Value>(&cmd).await.map(drop)
        })
    }

    fn fired<'a>(
        &'a self,
        id: &'a str,
        tick: &'a str,
        job: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let cmd = redis::cmd("HSET")
                .arg(&self.inner.keys.schedules)
                .arg(format!("{id}:last"))
                .arg(format!("{tick} {job}"))
                .clone();
            self.inner.query::<Value>(&cmd).await.map(drop)
        })
    }

    fn registered(
        &self,
    ) -> BoxFuture<'_, Result<Vec<(String, Option<(String, String)>)>, QueueError>> {
        Box::pin(async move {
            let key = &self.inner.keys.schedules;
            let reply: Value = self.inner.query(redis::cmd("HGETALL").arg(key)).await?;
            let pairs: Vec<(String, String)> = items(&reply)
                .chunks(2)
                .filter_map(|kv| Some((text(kv.first()?)?, text(kv.get(1)?)?)))
                .collect();
            let last = |id: &str| {
                pairs.iter().find_map(|(k, v)| {
                    let (tick, job) = v.split_once(' ')?;
                    (k.strip_suffix(":last")? == id).then(|| (tick.to_owned(), job.to_owned()))
                })
            };
            Ok(pairs
                .iter()
                .filter(|(k, _)| !k.ends_with(":last"))
                .map(|(id, state)| (state.clone(), last(id)))
                .collect())
        })
    }
}
