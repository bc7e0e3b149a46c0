//! The keys of one namespace and queue, and where each job's keys live.
//!
//! On one server a queue is one partition, with the names it always had
//! (`{ns}:q:{queue}:high`, `{ns}:result:{job}`, `{ns}:records`). On a Redis
//! Cluster it is split into partitions, each a set of keys that share one
//! hash tag (`{ns}:{queue.3}:high`, `{ns}:{queue.3}:result:{job}`), so every
//! script's keys are in one slot by construction and the partitions spread
//! over the primaries. A job belongs to the partition its id hashes to: its
//! stream entry, its id's mark, its outcome, its progress, its approval and
//! its cancellation all live there, and whoever knows the id finds them.

use crate::model::caller::Priority;

/// One partition's keys.
pub(super) struct Part {
    /// One stream per priority, highest first.
    pub(super) streams: [String; 4],
    pub(super) dead: String,
    /// Jobs set to run later, scored by when they are due.
    pub(super) delayed: String,
    /// Jobs cancelled, scored by when their marks lapse.
    pub(super) cancelled: String,
    /// Running jobs' last progress reports, by job id.
    pub(super) progress: String,
    /// Jobs parked for a person's approval, scored by their deadlines.
    pub(super) awaiting: String,
    /// Each parked job's message, by job id.
    pub(super) parked: String,
    /// People's decisions on jobs that need approval, by job id, until the
    /// job ends.
    pub(super) decisions: String,
    /// The workers' heartbeats, as this partition's scripts see them.
    pub(super) workers: String,
    /// The heartbeats the take and sign scripts write beside `workers`:
    /// on one server the namespace's (what idempotency locks are checked
    /// against, in the same step); on a cluster `workers` again, the
    /// namespace's being written apart (`Keys::alive`).
    pub(super) alive: String,
    /// Run records of the jobs finished here, capped.
    pub(super) records: String,
    /// The prefix of the job's own keys (outcome, id mark).
    jobs: String,
    /// On a cluster, the shard channel a job put in line here is announced
    /// on (idle workers listen to every partition's, as no blocking read
    /// spans partitions). In the partition's slot: an announcement reaches
    /// only the nodes that serve it, where a plain channel's reaches every
    /// node of the cluster.
    pub(super) wake: Option<String>,
}

impl Part {
    fn new(queue_prefix: &str, jobs: &str, alive: &str, clustered: bool) -> Part {
        let q = |name: &str| format!("{queue_prefix}:{name}");
        Part {
            streams: Priority::SERVED.map(|p| q(p.as_str())),
            dead: q("dead"),
            delayed: q("delayed"),
            cancelled: q("cancelled"),
            progress: q("progress"),
            awaiting: q("awaiting"),
            parked: q("parked"),
            decisions: q("decisions"),
            workers: q("workers"),
            alive: alive.to_owned(),
            records: format!("{jobs}:records"),
            jobs: jobs.to_owned(),
            wake: clustered.then(|| q("wake")),
        }
    }

    pub(super) fn stream(&self, p: Priority) -> &str {
        &self.streams[index(p) - 1]
    }

    /// Job `job_id`'s outcome.
    pub(super) fn result(&self, job_id: &str) -> String {
        format!("{}:result:{job_id}", self.jobs)
    }

    /// The mark that job `job_id` was queued (so that queueing it again does
    /// nothing).
    pub(super) fn queued(&self, job_id: &str) -> String {
        format!("{}:queued:{job_id}", self.jobs)
    }
}

/// The keys of one namespace and queue.
pub(super) struct Keys {
    /// The queue's partitions: one on a single server.
    pub(super) parts: Vec<Part>,
    /// The schedules workers registered, and each one's last tick.
    pub(super) schedules: String,
    /// Every worker's last heartbeat, across the namespace's queues: what an
    /// idempotency lock's holder is checked against.
    pub(super) alive: String,
    /// The namespace's fencing-token counter (one server).
    pub(super) fence: String,
    pub(super) ns: String,
}

impl Keys {
    /// The keys of `queue` on one server.
    pub(super) fn single(ns: &str, queue: &str) -> Keys {
        let alive = format!("{ns}:alive");
        Keys {
            parts: vec![Part::new(&format!("{ns}:q:{queue}"), ns, &alive, false)],
            schedules: format!("{ns}:q:{queue}:schedules"),
            alive,
            fence: format!("{ns}:fence"),
            ns: ns.to_owned(),
        }
    }

    /// The keys of `queue` split into `n` partitions on a cluster.
    pub(super) fn clustered(ns: &str, queue: &str, n: u32) -> Keys {
        let parts = (0..n.max(1))
            .map(|i| {
                let tagged = format!("{ns}:{{{queue}.{i}}}");
                Part::new(&tagged, &tagged, &format!("{tagged}:workers"), true)
            })
            .collect();
        Keys {
            parts,
            schedules: format!("{ns}:q:{queue}:schedules"),
            alive: format!("{ns}:alive"),
            fence: format!("{ns}:fence"),
            ns: ns.to_owned(),
        }
    }

    pub(super) fn clustered_layout(&self) -> bool {
        self.parts[0].wake.is_some()
    }

    /// On a cluster, every partition's announcement channel.
    pub(super) fn wake_channels(&self) -> Vec<String> {
        self.parts.iter().filter_map(|p| p.wake.clone()).collect()
    }

    /// The index of the partition job `job_id` belongs to.
    pub(super) fn part_index(&self, job_id: &str) -> usize {
        if self.parts.len() == 1 {
            return 0;
        }
        // FNV-1a: the same in every process and every version.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in job_id.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        (h % self.parts.len() as u64) as usize
    }

    /// The partition job `job_id` belongs to.
    pub(super) fn part_of(&self, job_id: &str) -> &Part {
        &self.parts[self.part_index(job_id)]
    }

    /// A delivery's id: the stream entry's, behind its partition's index
    /// when there are several (`3/1700000000000-0`).
    pub(super) fn delivery_id(&self, part: usize, entry: &str) -> String {
        if self.parts.len() == 1 {
            entry.to_owned()
        } else {
            format!("{part}/{entry}")
        }
    }

    /// The partition and the stream entry of a delivery's id.
    pub(super) fn entry<'a>(&self, delivery: &'a str) -> (usize, &'a str) {
        match delivery.split_once('/') {
            Some((p, entry)) => match p.parse::<usize>() {
                Ok(p) if p < self.parts.len() => (p, entry),
                _ => (0, delivery),
            },
            None => (0, delivery),
        }
    }

    /// The lock, result and fencing keys of idempotency key (`skill`,
    /// `key`): on a cluster, under one hash tag, with a fencing counter of
    /// their own.
    pub(super) fn idempotency(&self, skill: &str, key: &str) -> (String, String, String) {
        let lock = if self.clustered_layout() {
            format!("{}:idem:{{{skill}:{key}}}", self.ns)
        } else {
            format!("{}:idem:{skill}:{key}", self.ns)
        };
        let result = format!("{lock}:result");
        let fence = if self.clustered_layout() {
            format!("{lock}:fence")
        } else {
            self.fence.clone()
        };
        (lock, result, fence)
    }
}

/// A priority's index among the served ones, 1 (highest) to 4, as scripts
/// name streams.
pub(super) fn index(p: Priority) -> usize {
    Priority::SERVED.iter().position(|&q| q == p).unwrap_or(2) + 1
}
