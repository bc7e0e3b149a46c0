//! The Lua scripts of the Redis backend: each step of the queue protocol that
//! touches several keys is one script, so it is atomic and one round trip.
//! Times come from the server (`TIME`), so workers on different machines
//! agree on rate windows and heartbeats.

/// Queue message `ARGV[1]` (job `ARGV[4]`) on stream KEYS[1] unless job
/// id KEYS[2] was taken in the last `ARGV[2]` ms (as long as outcomes are
/// kept): the id is marked with the job's digest `ARGV[3]`. Every entry of
/// a priority stream carries its job's id beside the message (`id`), which
/// a take checks against the cancellations (`CLAIM`). On a cluster, the
/// job is announced on shard channel `ARGV[5]`, in the partition's slot
/// (idle workers listen there).
/// Returns the entry id; 0 when the same job was queued already (a request
/// sent again after a lost reply does not queue it twice); -1 when another
/// job holds the id.
pub(super) const ENQUEUE: &str = r#"
local held = redis.call('GET', KEYS[2])
if not held then
  -- Queued first: a stream key of the wrong type fails here, before the id
  -- is marked (a script's writes are not undone by a later error).
  local id = redis.call('XADD', KEYS[1], '*', 'job', ARGV[1], 'id', ARGV[4])
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
  if ARGV[5] and ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[5], '1') end
  return id
end
if held == ARGV[3] then return 0 end
return -1
"#;

/// Queue a job to run later: KEYS[1] the queue's delayed set, KEYS[2] the
/// mark of its id; ARGV[1] the member (its priority's index, a newline, the
/// message), ARGV[2] the mark's lifetime in ms, ARGV[3] the job's digest,
/// ARGV[4] when it is due (Unix ms). Returns 1 when queued, 0 when the same
/// job was queued already, -1 when another job holds the id.
pub(super) const ENQUEUE_AT: &str = r#"
local held = redis.call('GET', KEYS[2])
if not held then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
  return 1
end
if held == ARGV[3] then return 0 end
return -1
"#;

/// Move the jobs that are due (by Redis's clock) from the delayed set
/// KEYS[1] to their priority's stream (KEYS[2..5], highest first), at most
/// ARGV[1] of them. One script: a job moves once whichever workers run it at
/// the same time. A stream key of the wrong type leaves its job delayed.
/// Returns how many moved.
pub(super) const PROMOTE: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local moved = 0
for _, m in ipairs(due) do
  local sep = string.find(m, '\n', 1, true)
  local i = sep and tonumber(string.sub(m, 1, sep - 1))
  if i and i >= 1 and i <= 4 then
    local msg = string.sub(m, sep + 1)
    local ok, job = pcall(cjson.decode, msg)
    local id = ok and type(job) == 'table' and job.jobId or ''
    local r = redis.pcall('XADD', KEYS[1 + i], '*', 'job', msg, 'id', tostring(id))
    if type(r) ~= 'table' or not r.err then
      redis.call('ZREM', KEYS[1], m)
      moved = moved + 1
    end
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return moved
"#;

/// The Lua functions the scripts that take jobs share: `now()`, the
/// server's clock in ms, and `cancelled(zset, id, now)`, 1 when job `id`
/// is among the queue's cancellations (the sorted set `CANCEL` writes,
/// scored by when each mark lapses), else 0. A take answers it with each
/// entry, so a job cancelled while it waited is never run by a worker that
/// had not heard of the cancellation yet.
macro_rules! cancelled {
    () => {
        r#"
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function cancelled(zset, id, at)
  if not id or id == '' then return 0 end
  local s = redis.call('ZSCORE', zset, id)
  if s and tonumber(s) >= at then return 1 end
  return 0
end
local function field(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return nil
end
"#
    };
}

/// Whether each of the jobs `ARGV` is among the queue's cancellations
/// (KEYS[1]): a list of 1 and 0, in order. What a blocking take, which no
/// script can make, asks of what it read.
pub(super) const CANCELLED_AMONG: &str = concat!(
    cancelled!(),
    r#"
local at = now()
local out = {}
for i, id in ipairs(ARGV) do out[i] = cancelled(KEYS[1], id, at) end
return out
"#
);

/// The Lua function the scripts that release a parked job share:
/// `unpark(parked, deadlines, streams, id)` puts job `id` (its member in hash
/// `parked`: its priority's index, a newline, the message) back on its
/// priority's stream (`streams`, highest first) and forgets it in `parked`
/// and in the sorted set `deadlines`; whether it was parked.
macro_rules! unpark {
    () => {
        r#"
local function unpark(parked, deadlines, streams, id)
  local m = redis.call('HGET', parked, id)
  if not m then return false end
  local sep = string.find(m, '\n', 1, true)
  local i = sep and tonumber(string.sub(m, 1, sep - 1))
  if i and i >= 1 and i <= 4 then
    redis.call('XADD', streams[i], '*', 'job', string.sub(m, sep + 1), 'id', id)
  end
  redis.call('HDEL', parked, id)
  redis.call('ZREM', deadlines, id)
  return true
end
"#
    };
}

/// Cancel a job: KEYS[1] its outcome, KEYS[2] the mark of its id
/// (`ENQUEUE` sets it), KEYS[3] the queue's cancellations (a sorted set of
/// job ids scored by when their mark lapses); ARGV[1] the id, ARGV[2] how
/// long the mark is kept (ms). A job parked for approval (KEYS[4] the
/// parked jobs, KEYS[5] their deadlines, KEYS[6..9] the priority streams)
/// goes back in line, where the next worker ends it `cancelled`. Returns 2
/// when the job has an outcome already, 0 when its id is unknown, 1 when it
/// is marked.
pub(super) const CANCEL: &str = concat!(
    unpark!(),
    r#"
if redis.call('EXISTS', KEYS[1]) == 1 then return 2 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
unpark(KEYS[4], KEYS[5], {KEYS[6], KEYS[7], KEYS[8], KEYS[9]}, ARGV[1])
return 1
"#
);

/// Park entry `ARGV[2]` of stream KEYS[1] (group `ARGV[1]`), job `ARGV[3]`,
/// until a person decides on it: unless a decision is recorded already
/// (KEYS[4], the decisions by job id: returns `{1, decision}`, the entry
/// stays this worker's), or the entry is pending to another worker (this one
/// was taken over: returns `{2}`, nothing written), the entry is acknowledged
/// and deleted, the job kept in KEYS[3] (job id to member `ARGV[4]`: its
/// priority's index, a newline, the message) with its deadline, now plus
/// `ARGV[6]` ms, in KEYS[2]. Returns `{0}` when parked.
pub(super) const PARK: &str = r#"
local d = redis.call('HGET', KEYS[4], ARGV[3])
if d then return {1, d} end
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if p[1] and p[1][2] ~= ARGV[5] then return {2} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), ARGV[3])
if p[1] then redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('XDEL', KEYS[1], ARGV[2])
return {0}
"#;

/// Record decision `ARGV[2]` on job `ARGV[1]`: KEYS[1] the decisions,
/// KEYS[2] the parked jobs' deadlines, KEYS[3] the parked jobs, KEYS[4..7]
/// the priority streams, KEYS[8] the job's outcome, KEYS[9] the mark of its
/// id. A parked job goes back in line, where a worker runs it on the
/// decision. Returns 1 when it was parked, 4 when it was not yet (the
/// decision waits for it), 3 when it was decided already (the first
/// decision stands), 2 when it has an outcome, 0 when its id is unknown.
pub(super) const DECIDE: &str = concat!(
    unpark!(),
    r#"
if redis.call('EXISTS', KEYS[8]) == 1 then return 2 end
if redis.call('EXISTS', KEYS[9]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 3 end
if unpark(KEYS[3], KEYS[2], {KEYS[4], KEYS[5], KEYS[6], KEYS[7]}, ARGV[1]) then return 1 end
return 4
"#
);

/// The parked jobs whose deadline passed (by Redis's clock; KEYS[1] their
/// deadlines, KEYS[2] the jobs, KEYS[3] the decisions, KEYS[4..7] the
/// priority streams), at most `ARGV[1]` of them: each is decided `expired`
/// (unless decided already) and goes back in line, where a worker ends it
/// `approval_expired`. One script: a job moves once across the fleet.
/// Returns how many moved.
pub(super) const EXPIRE_APPROVALS: &str = concat!(
    unpark!(),
    r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
local moved = 0
for k = 1, #due, 2 do
  local id, deadline = due[k], due[k + 1]
  redis.call('HSETNX', KEYS[3], id, '{"decision":"expired","deadline_ms":' .. deadline .. '}')
  unpark(KEYS[2], KEYS[1], {KEYS[4], KEYS[5], KEYS[6], KEYS[7]}, id)
  redis.call('ZREM', KEYS[1], id)
  moved = moved + 1
end
return moved
"#
);

/// The queue's cancellations whose marks have not lapsed: KEYS[1] the
/// sorted set `CANCEL` writes.
pub(super) const CANCELLATIONS: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, 100000)
"#;

/// Take up to `ARGV[3]` new entries, highest priority first, for consumer
/// `ARGV[2]` of group `ARGV[1]`; note the consumer's heartbeat: alive until
/// now plus its visibility timeout `ARGV[4]` ms, unless `ARGV[5]` is `0`
/// (on a cluster, where a take visits every partition in turn and the
/// heartbeats are written by the signs alone: a take that finds nothing
/// then writes nothing, and its primary replicates nothing). KEYS: the four priority
/// streams (highest first), the queue's workers hash, the namespace's
/// heartbeats hash, the queue's cancellations. A stream key that holds
/// something else (a key of the wrong type, written by hand) is skipped, so
/// the other priorities are still served, and named. Returns `{{{priority
/// index, id, fields, cancelled}, ...}, {key that is not a stream, ...}}`,
/// `cancelled` 1 for a job cancelled while it waited.
pub(super) const CLAIM: &str = concat!(
    cancelled!(),
    r#"
local out = {}
local bad = {}
local want = tonumber(ARGV[3])
local at = now()
for i = 1, 4 do
  if want <= 0 then break end
  local r = redis.pcall('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', want, 'STREAMS', KEYS[i], '>')
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'NOGROUP') then return redis.error_reply(r.err) end
    table.insert(bad, KEYS[i])
  elseif r then
    for _, e in ipairs(r[1][2]) do
      table.insert(out, {i, e[1], e[2], cancelled(KEYS[7], field(e[2], 'id'), at)})
      want = want - 1
    end
  end
end
if ARGV[5] ~= '0' then
  local alive = at + tonumber(ARGV[4])
  redis.call('HSET', KEYS[5], ARGV[2], alive)
  redis.call('HSET', KEYS[6], ARGV[2], alive)
end
return {out, bad}
"#
);

/// A worker's sign of life: its heartbeat, alive until now plus its
/// visibility timeout `ARGV[3]` ms (KEYS[5], the queue's workers hash, and
/// KEYS[6], the namespace's, which idempotency locks are checked against),
/// and the entries it holds renewed, each only while it is still this
/// worker's (`ARGV[4..]`: pairs of stream index, 1 to 4, and entry id).
/// An entry another worker took over is not taken back: its id is returned,
/// so the worker stops working on it. An entry pending to no one (finished
/// by another worker, or lost by a restart without persistence) is left to
/// the finish, which tells the two apart. KEYS[1..4]: the priority streams;
/// `ARGV[1]`: the group; `ARGV[2]`: the worker.
pub(super) const SIGN: &str = r#"
local t = redis.call('TIME')
local alive = t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[3])
redis.call('HSET', KEYS[5], ARGV[2], alive)
redis.call('HSET', KEYS[6], ARGV[2], alive)
local lost = {}
for i = 4, #ARGV, 2 do
  local stream, id = KEYS[tonumber(ARGV[i])], ARGV[i + 1]
  local p = redis.call('XPENDING', stream, ARGV[1], id, id, 1)
  if p[1] then
    if p[1][2] == ARGV[2] then
      redis.call('XCLAIM', stream, ARGV[1], ARGV[2], 0, id, 'JUSTID')
    else
      table.insert(lost, id)
    end
  end
end
return lost
"#;

/// Finish entry `ARGV[2]` of stream KEYS[1] (group `ARGV[1]`) for worker
/// `ARGV[7]`: acknowledge it, store outcome `ARGV[3]` as the job's result (a
/// one-element list at KEYS[2], kept `ARGV[4]` ms: waiters block on it by
/// rotating it onto itself) and run record `ARGV[5]` (when not empty) on
/// stream KEYS[3], capped near `ARGV[6]` entries, and forget the decision
/// on job `ARGV[8]` in KEYS[4] (it needed approval), all or nothing:
///
/// - the entry is pending to this worker: finished, returns 1;
/// - it is pending to another worker (this one was paused or cut off past
///   the visibility timeout, and its job was taken over): nothing is
///   written, returns 0; the other worker's outcome is the job's;
/// - it is pending to no one: when the job already has an outcome (another
///   worker finished it), nothing, returns 0; otherwise the server lost the
///   entry (a restart without persistence) and the outcome and the record
///   are written together, returns 2.
pub(super) const FINISH: &str = r#"
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
local owner = p[1] and p[1][2]
if owner and owner ~= ARGV[7] then return 0 end
if not owner and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if owner then redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[8])
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if ARGV[5] ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*', 'record', ARGV[5])
end
if owner then return 1 end
return 2
"#;

/// Give entry `ARGV[2]` of stream KEYS[1] back: acknowledged and queued again
/// as message `ARGV[3]` of job `ARGV[4]` (group `ARGV[1]`).
pub(super) const HAND_BACK: &str = r#"
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return redis.call('XADD', KEYS[1], '*', 'job', ARGV[3], 'id', ARGV[4])
"#;

/// Move entry `ARGV[2]` of stream KEYS[1] to the dead letters KEYS[2]: its
/// message as the stream holds it (byte for byte, whatever its encoding;
/// `ARGV[3]` when the entry is gone), the reason `ARGV[4]`, its deliveries
/// `ARGV[5]` and the worker `ARGV[6]`; acknowledged and deleted from its
/// stream.
pub(super) const DEAD_LETTER: &str = r#"
local raw = ARGV[3]
local e = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if e[1] then
  local f = e[1][2]
  for i = 1, #f, 2 do
    if f[i] == 'job' then raw = f[i + 1] end
  end
end
redis.call('XADD', KEYS[2], '*', 'job', raw, 'reason', ARGV[4], 'stream', KEYS[1],
  'id', ARGV[2], 'deliveries', ARGV[5], 'worker', ARGV[6])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
"#;

/// Take over up to `ARGV[4]` entries of stream KEYS[1] that their consumer
/// has not signed for `ARGV[3]` ms, for consumer `ARGV[2]` of group
/// `ARGV[1]`. An entry already delivered `ARGV[5]` times goes to the dead
/// letters KEYS[2] instead, with the reason. Returns `{{id, fields,
/// deliveries, cancelled}, ...}` of the entries taken over, `cancelled` 1
/// for a job among the cancellations KEYS[3].
pub(super) const RECLAIM: &str = concat!(
    cancelled!(),
    r#"
local out = {}
local at = now()
local stale = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', ARGV[4])
for _, p in ipairs(stale) do
  local id, owner, n = p[1], p[2], p[4]
  if n >= tonumber(ARGV[5]) then
    local e = redis.call('XRANGE', KEYS[1], id, id)
    local raw = ''
    if e[1] then
      local f = e[1][2]
      for i = 1, #f, 2 do
        if f[i] == 'job' then raw = f[i + 1] end
      end
    end
    redis.call('XADD', KEYS[2], '*', 'job', raw,
      'reason', 'delivered ' .. n .. ' times and never acknowledged: each worker that took it stopped answering (the last was ' .. owner .. ')',
      'stream', KEYS[1], 'id', id, 'deliveries', n, 'worker', owner)
    redis.call('XACK', KEYS[1], ARGV[1], id)
    redis.call('XDEL', KEYS[1], id)
  else
    local c = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], id)
    if c[1] and c[1][2] then
      table.insert(out, {c[1][1], c[1][2], n + 1, cancelled(KEYS[3], field(c[1][2], 'id'), at)})
    end
  end
end
return out
"#
);

/// Idempotency: the stored result of key KEYS[2] (`{0, result}`); or the
/// key's lock KEYS[1] taken with value `ARGV[1]` (a token, then the holding
/// worker's name when a worker runs the job) for `ARGV[2]` ms, with a
/// fencing token from counter KEYS[4] (`{1, fence}`); or, when the lock's
/// holder is a worker whose heartbeat has run out (it died, or stopped
/// answering), the lock taken over at once (`{3, fence, holder}`); or the
/// lock's remaining time and its value when a live job holds it (`{2, ms,
/// held}`).
///
/// On one server (`ARGV[3]` empty) the heartbeats are KEYS[3], read in the
/// same step. On a cluster they live in another slot: `ARGV[3]` is `?` to
/// learn who holds the lock, then the value held when the caller found its
/// holder's heartbeat run out, taken over only if it still holds it. A
/// cluster's counter is the key's own (KEYS[4], in its slot), never below
/// the server's clock in microseconds, so it grows even after it lapsed.
pub(super) const IDEM_CLAIM: &str = r#"
local function fence()
  local f = redis.call('INCR', KEYS[4])
  if ARGV[3] ~= '' then
    local t = redis.call('TIME')
    local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
    if f < floor then
      f = floor
      redis.call('SET', KEYS[4], string.format('%.0f', f))
    end
    redis.call('PEXPIRE', KEYS[4], 2 * tonumber(ARGV[2]))
  end
  return f
end
local r = redis.call('GET', KEYS[2])
if r then return {0, r} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, fence()}
end
local held = redis.call('GET', KEYS[1])
local holder = held and string.match(held, '^%S+ (.+)$')
if holder then
  local dead = false
  if ARGV[3] == '' then
    local alive = redis.call('HGET', KEYS[3], holder)
    local t = redis.call('TIME')
    local now = t[1] * 1000 + math.floor(t[2] / 1000)
    dead = not alive or tonumber(alive) < now
  else
    dead = held == ARGV[3]
  end
  if dead then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return {3, fence(), holder}
  end
end
return {2, redis.call('PTTL', KEYS[1]), held or ''}
"#;

/// Idempotency: store result `ARGV[2]` (when not empty) at KEYS[2] for
/// `ARGV[3]` ms, when lock KEYS[1] still holds `ARGV[1]` (this job's), or
/// when no one holds it and no result is stored (the lock expired while
/// nobody wanted the key); release the lock if it is this job's. A holder
/// whose key was taken over stores nothing: the result is its successor's.
/// Returns 1 when the lock was this job's.
pub(super) const IDEM_FINISH: &str = r#"
local held = redis.call('GET', KEYS[1])
local ours = held == ARGV[1]
if ARGV[2] ~= '' and (ours or (not held and redis.call('EXISTS', KEYS[2]) == 0)) then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if ours then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"#;

/// The queue's state in one step: per priority stream (KEYS[1..4]) its
/// length and its pending count for group `ARGV[1]`, the dead letters'
/// length (KEYS[5]), the workers' heartbeats (KEYS[6]), the server's time in
/// ms, and the keys that hold something other than what they should (a key
/// written by hand), whose counts are 0. A missing stream or group counts 0.
pub(super) const STATUS: &str = r#"
local counts = {}
local bad = {}
local function count(v, key)
  if type(v) == 'table' and v.err then
    if key and string.find(v.err, 'WRONGTYPE') then table.insert(bad, key) end
    return 0
  end
  return v
end
for i = 1, 4 do
  table.insert(counts, count(redis.pcall('XLEN', KEYS[i]), KEYS[i]))
  local p = redis.pcall('XPENDING', KEYS[i], ARGV[1])
  if type(p) == 'table' and not p.err then p = p[1] end
  table.insert(counts, count(p, nil))
end
table.insert(counts, count(redis.pcall('XLEN', KEYS[5]), KEYS[5]))
local seen = redis.pcall('HGETALL', KEYS[6])
if type(seen) == 'table' and seen.err then
  table.insert(bad, KEYS[6])
  seen = {}
end
local t = redis.call('TIME')
return {counts, seen, t[1] * 1000 + math.floor(t[2] / 1000), bad}
"#;

/// Rate limit: admit member `ARGV[3]` into the sliding window KEYS[1] of
/// `ARGV[2]` ms if it holds fewer than `ARGV[1]` admissions (0), else the ms
/// until the oldest leaves it.
pub(super) const RATE: &str = r#"
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(first[2]) + tonumber(ARGV[2]) - now)
"#;
