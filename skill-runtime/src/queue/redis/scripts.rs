//! The Lua scripts of the Redis backend: each step of the queue protocol that
//! touches several keys is one script, so it is atomic and one round trip.
//! Times come from the server (`TIME`), so workers on different machines
//! agree on rate windows and heartbeats.

/// Queue message `ARGV[1]` on stream KEYS[1] unless job id KEYS[2] was
/// taken in the last `ARGV[2]` ms (as long as outcomes are kept): the id is
/// marked with the job's digest `ARGV[3]`. Returns the entry id; 0 when the
/// same job was queued already (a request sent again after a lost reply
/// does not queue it twice); -1 when another job holds the id.
pub(super) const ENQUEUE: &str = r#"
local held = redis.call('GET', KEYS[2])
if not held then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
  return redis.call('XADD', KEYS[1], '*', 'job', ARGV[1])
end
if held == ARGV[3] then return 0 end
return -1
"#;

/// Take up to `ARGV[3]` new entries, highest priority first, for consumer
/// `ARGV[2]` of group `ARGV[1]`; note the consumer's heartbeat. KEYS: the four
/// priority streams (highest first), the workers hash. Returns
/// `{{priority index, id, fields}, ...}`.
pub(super) const CLAIM: &str = r#"
local out = {}
local want = tonumber(ARGV[3])
for i = 1, 4 do
  if want <= 0 then break end
  local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', want, 'STREAMS', KEYS[i], '>')
  if r then
    for _, e in ipairs(r[1][2]) do
      table.insert(out, {i, e[1], e[2]})
      want = want - 1
    end
  end
end
local t = redis.call('TIME')
redis.call('HSET', KEYS[5], ARGV[2], t[1] * 1000 + math.floor(t[2] / 1000))
return out
"#;

/// Acknowledge entry `ARGV[2]` of stream KEYS[1] (group `ARGV[1]`) and, when
/// this acknowledgement is the first, store outcome `ARGV[3]` as the job's
/// result (a one-element list at KEYS[2], kept `ARGV[4]` ms: waiters block on
/// it by rotating it onto itself). Run record `ARGV[5]` (when not empty) goes
/// to stream KEYS[3], capped near `ARGV[6]` entries. Returns 1 when this was
/// the first acknowledgement.
pub(super) const FINISH: &str = r#"
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if acked == 1 then
  redis.call('DEL', KEYS[2])
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
if ARGV[5] ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*', 'record', ARGV[5])
end
return acked
"#;

/// Give entry `ARGV[2]` of stream KEYS[1] back: acknowledged and queued again
/// as message `ARGV[3]` (group `ARGV[1]`).
pub(super) const HAND_BACK: &str = r#"
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return redis.call('XADD', KEYS[1], '*', 'job', ARGV[3])
"#;

/// Move entry `ARGV[2]` of stream KEYS[1] to the dead letters KEYS[2]: its
/// message `ARGV[3]`, the reason `ARGV[4]`, its deliveries `ARGV[5]` and the
/// worker `ARGV[6]`; acknowledged and deleted from its stream.
pub(super) const DEAD_LETTER: &str = r#"
redis.call('XADD', KEYS[2], '*', 'job', ARGV[3], 'reason', ARGV[4], 'stream', KEYS[1],
  'id', ARGV[2], 'deliveries', ARGV[5], 'worker', ARGV[6])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
"#;

/// Take over up to `ARGV[4]` entries of stream KEYS[1] that their consumer
/// has not signed for `ARGV[3]` ms, for consumer `ARGV[2]` of group
/// `ARGV[1]`. An entry already delivered `ARGV[5]` times goes to the dead
/// letters KEYS[2] instead, with the reason. Returns `{{id, fields,
/// deliveries}, ...}` of the entries taken over.
pub(super) const RECLAIM: &str = r#"
local out = {}
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
      table.insert(out, {c[1][1], c[1][2], n + 1})
    end
  end
end
return out
"#;

/// Idempotency: the stored result of key KEYS[2] (`{0, result}`), or the
/// key's lock KEYS[1] taken for token `ARGV[1]` for `ARGV[2]` ms (`{1}`), or
/// the lock's remaining time when another job holds it (`{2, ms}`).
pub(super) const IDEM_CLAIM: &str = r#"
local r = redis.call('GET', KEYS[2])
if r then return {0, r} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
return {2, redis.call('PTTL', KEYS[1])}
"#;

/// Idempotency: store result `ARGV[2]` (when not empty) at KEYS[2] for
/// `ARGV[3]` ms, and release lock KEYS[1] if token `ARGV[1]` still holds it.
pub(super) const IDEM_FINISH: &str = r#"
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
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
