//! The backend's tables and functions, as versioned migrations. Each step of
//! the queue's protocol that touches several rows is one function, called in
//! one statement: atomic, and one round trip (what the Lua scripts are on
//! Redis). Times come from the server (`clock_timestamp()`), so workers on
//! different machines agree on deadlines and windows.
//!
//! In the text, `@.` stands for the schema (quoted) and `@@` for its bare
//! name (in the names of notification channels).

/// The migrations, in order: (version, SQL). A version, once released, is
/// never edited; a change is a new version.
pub(super) const MIGRATIONS: &[(i32, &str)] = &[(1, V1), (2, V2)];

/// Run records paged newest first by skill, status, caller or job, each on
/// an index that holds the filter and the row's id (the console's runs
/// pages); the queue's state with each worker's heartbeat.
const V2: &str = include_str!("migrations/2.sql");

/// Jobs (state 0 waiting, 1 running, 2 delayed, 3 parked for approval), the
/// marks of the ids taken, outcomes, dead letters, workers' heartbeats,
/// cancellations, progress reports, decisions, idempotency keys, rate
/// windows, run records, run states, artifacts, the fleet's secret,
/// once-marks and schedules.
const V1: &str = r#"
CREATE TABLE @.jobs (
  seq bigserial PRIMARY KEY,
  queue text NOT NULL,
  job_id text NOT NULL,
  priority smallint NOT NULL,
  state smallint NOT NULL,
  message text NOT NULL,
  due_at timestamptz,
  worker text,
  deadline timestamptz,
  deliveries integer NOT NULL DEFAULT 0,
  queued_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX jobs_waiting ON @.jobs (queue, priority, seq) WHERE state = 0;
CREATE INDEX jobs_running ON @.jobs (queue, deadline) WHERE state = 1;
CREATE INDEX jobs_later ON @.jobs (queue, state, due_at) WHERE state >= 2;
CREATE INDEX jobs_job ON @.jobs (queue, job_id);

CREATE TABLE @.ids (
  queue text, job_id text, digest text NOT NULL, until timestamptz NOT NULL,
  PRIMARY KEY (queue, job_id));
CREATE TABLE @.outcomes (
  queue text, job_id text, outcome text NOT NULL, until timestamptz NOT NULL,
  PRIMARY KEY (queue, job_id));
CREATE TABLE @.dead (
  id bigserial PRIMARY KEY, queue text NOT NULL, job_id text, message text NOT NULL,
  reason text NOT NULL, deliveries integer NOT NULL, worker text,
  at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE INDEX dead_queue ON @.dead (queue, id);
CREATE TABLE @.workers (
  worker text PRIMARY KEY, queue text NOT NULL, alive_until timestamptz NOT NULL);
CREATE TABLE @.cancels (
  queue text, job_id text, until timestamptz NOT NULL, PRIMARY KEY (queue, job_id));
CREATE TABLE @.progress (
  queue text, job_id text, report text NOT NULL, PRIMARY KEY (queue, job_id));
CREATE TABLE @.decisions (
  queue text, job_id text, decision text NOT NULL, PRIMARY KEY (queue, job_id));
CREATE TABLE @.idem (
  skill text, key text, holder text, lock_until timestamptz, result text,
  result_until timestamptz, PRIMARY KEY (skill, key));
CREATE SEQUENCE @.fences;
CREATE TABLE @.rate (skill text NOT NULL, at timestamptz NOT NULL);
CREATE INDEX rate_skill ON @.rate (skill, at);
CREATE TABLE @.records (
  id bigserial PRIMARY KEY,
  job_id text NOT NULL,
  skill text NOT NULL,
  version text,
  status text NOT NULL,
  started_at timestamptz,
  completed_at timestamptz,
  duration_us bigint,
  caller text,
  trace_id text,
  record jsonb NOT NULL);
CREATE INDEX records_job ON @.records (job_id);
CREATE INDEX records_skill ON @.records (skill, completed_at);
CREATE INDEX records_status ON @.records (status, completed_at);
CREATE INDEX records_completed ON @.records (completed_at);
CREATE TABLE @.runs (
  job_id text PRIMARY KEY, state text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  saved_at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE INDEX runs_started ON @.runs (started_at);
CREATE TABLE @.artifacts (name text PRIMARY KEY, body text NOT NULL, until timestamptz NOT NULL);
CREATE TABLE @.secret (one boolean PRIMARY KEY DEFAULT true CHECK (one), secret text NOT NULL);
CREATE TABLE @.once (mark text PRIMARY KEY, until timestamptz NOT NULL);
CREATE TABLE @.schedules (
  queue text, id text, state text NOT NULL, last_tick text, last_job text,
  PRIMARY KEY (queue, id));

CREATE FUNCTION @.ms(n bigint) RETURNS interval LANGUAGE sql IMMUTABLE AS
$$ SELECT n * interval '1 millisecond' $$;

CREATE FUNCTION @.epoch_ms(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS
$$ SELECT floor(extract(epoch FROM t) * 1000)::bigint $$;

-- Queue message `msg` of job `jid` (digest `dig`) at priority `pri`, now
-- (`due` null) or delayed until `due`, unless the id was taken within the
-- last `ttl_ms`: 1 queued, 0 the same job was queued already, -1 another
-- job holds the id.
CREATE FUNCTION @.enqueue(q text, jid text, dig text, pri smallint, msg text,
                          ttl_ms bigint, due timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  held text;
  t timestamptz := clock_timestamp();
BEGIN
  INSERT INTO @.ids AS i VALUES (q, jid, dig, t + @.ms(ttl_ms))
    ON CONFLICT (queue, job_id) DO UPDATE SET digest = excluded.digest, until = excluded.until
    WHERE i.until < t;
  IF NOT FOUND THEN
    SELECT digest INTO held FROM @.ids WHERE queue = q AND job_id = jid;
    RETURN CASE WHEN held = dig THEN 0 ELSE -1 END;
  END IF;
  INSERT INTO @.jobs (queue, job_id, priority, state, message, due_at)
    VALUES (q, jid, pri, CASE WHEN due IS NULL THEN 0 ELSE 2 END, msg, due);
  IF due IS NULL THEN PERFORM pg_notify('@@.jobs', q); END IF;
  RETURN 1;
END $$;

-- `enqueue` for each job of a batch (one transaction, one commit); the
-- answers in order.
CREATE FUNCTION @.enqueue_many(q text, jids text[], digs text[], pris smallint[],
                               msgs text[], ttls bigint[], dues timestamptz[])
RETURNS integer[] LANGUAGE plpgsql AS $$
DECLARE answers integer[] := '{}';
BEGIN
  FOR i IN 1 .. coalesce(array_length(jids, 1), 0) LOOP
    answers := answers || @.enqueue(q, jids[i], digs[i], pris[i], msgs[i], ttls[i], dues[i]);
  END LOOP;
  RETURN answers;
END $$;

-- Note worker `w`'s heartbeat: alive for `vis_ms` more.
CREATE FUNCTION @.beat(q text, w text, vis_ms bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO @.workers VALUES (w, q, clock_timestamp() + @.ms(vis_ms))
    ON CONFLICT (worker) DO UPDATE SET alive_until = excluded.alive_until, queue = excluded.queue
$$;

-- Take up to `n` waiting jobs for worker `w`, highest priority first, each
-- held for `vis_ms`; whether each was cancelled while it waited.
CREATE FUNCTION @.take(q text, w text, n integer, vis_ms bigint)
RETURNS TABLE (o_seq bigint, o_priority smallint, o_deliveries integer, o_message text,
               o_cancelled boolean)
LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN
  PERFORM @.beat(q, w, vis_ms);
  RETURN QUERY
  WITH picked AS (
    SELECT j.seq FROM @.jobs j WHERE j.queue = q AND j.state = 0
    ORDER BY j.priority, j.seq LIMIT n FOR UPDATE SKIP LOCKED)
  UPDATE @.jobs j SET state = 1, worker = w, deadline = t + @.ms(vis_ms),
                      deliveries = j.deliveries + 1
  FROM picked WHERE j.seq = picked.seq
  RETURNING j.seq, j.priority, j.deliveries, j.message,
    EXISTS (SELECT 1 FROM @.cancels c WHERE c.queue = q AND c.job_id = j.job_id AND c.until >= t);
END $$;

-- Worker `w` is alive, and still works on `held`: their deadlines move on.
-- Returns those of `held` that another worker took over.
CREATE FUNCTION @.sign(q text, w text, vis_ms bigint, held bigint[]) RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM @.beat(q, w, vis_ms);
  UPDATE @.jobs SET deadline = clock_timestamp() + @.ms(vis_ms)
    WHERE seq = ANY (held) AND state = 1 AND worker = w;
  RETURN QUERY SELECT j.seq FROM @.jobs j
    WHERE j.seq = ANY (held) AND j.state = 1 AND j.worker IS DISTINCT FROM w;
END $$;

-- Take over up to `n` jobs whose worker let their deadline pass; those
-- delivered `max_deliveries` times go to the dead letters instead.
CREATE FUNCTION @.reclaim(q text, w text, n integer, vis_ms bigint, max_deliveries integer)
RETURNS TABLE (o_seq bigint, o_priority smallint, o_deliveries integer, o_message text,
               o_cancelled boolean)
LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN
  WITH stale AS (
    SELECT j.seq FROM @.jobs j WHERE j.queue = q AND j.state = 1 AND j.deadline < t
      AND j.deliveries >= max_deliveries ORDER BY j.seq LIMIT n FOR UPDATE SKIP LOCKED),
  gone AS (DELETE FROM @.jobs j USING stale WHERE j.seq = stale.seq
           RETURNING j.queue, j.job_id, j.message, j.deliveries, j.worker)
  INSERT INTO @.dead (queue, job_id, message, reason, deliveries, worker)
    SELECT g.queue, g.job_id, g.message,
      'delivered ' || g.deliveries || ' times and never acknowledged: each worker that took it stopped answering (the last was ' || coalesce(g.worker, '?') || ')',
      g.deliveries, g.worker
    FROM gone g;
  RETURN QUERY
  WITH stale AS (
    SELECT j.seq FROM @.jobs j WHERE j.queue = q AND j.state = 1 AND j.deadline < t
    ORDER BY j.seq LIMIT n FOR UPDATE SKIP LOCKED)
  UPDATE @.jobs j SET worker = w, deadline = t + @.ms(vis_ms), deliveries = j.deliveries + 1
  FROM stale WHERE j.seq = stale.seq
  RETURNING j.seq, j.priority, j.deliveries, j.message,
    EXISTS (SELECT 1 FROM @.cancels c WHERE c.queue = q AND c.job_id = j.job_id AND c.until >= t);
END $$;

-- Run records `rs` (a JSON array of records) as rows.
CREATE FUNCTION @.record(rs jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO @.records (job_id, skill, version, status, started_at, completed_at,
                         duration_us, caller, trace_id, record)
  SELECT r->>'job_id', coalesce(r->>'skill', ''), r->>'version', coalesce(r->>'status', ''),
         (r->>'started_at')::timestamptz, (r->>'completed_at')::timestamptz,
         (r->>'duration_us')::bigint, r->'caller'->>'user_id', r->>'trace_id', r
  FROM jsonb_array_elements(rs) AS r
$$;

-- Finish job `jid` (row `s`) for worker `w`: its outcome kept `ttl_ms`, its
-- run record `rec` (when not empty) stored, its decision forgotten, all or
-- nothing. 1 finished; 0 another worker holds it, or finished it; 2 the row
-- was gone (dead-lettered by a reclaim) and the outcome is stored anyway.
CREATE FUNCTION @.finish(q text, s bigint, w text, jid text, outcome text, ttl_ms bigint,
                         rec text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  owner text;
  there boolean;
  t timestamptz := clock_timestamp();
BEGIN
  SELECT worker INTO owner FROM @.jobs WHERE seq = s FOR UPDATE;
  there := FOUND;
  IF there AND owner IS DISTINCT FROM w THEN RETURN 0; END IF;
  IF NOT there AND EXISTS (SELECT 1 FROM @.outcomes
                           WHERE queue = q AND job_id = jid AND until >= t) THEN
    RETURN 0;
  END IF;
  IF there THEN DELETE FROM @.jobs WHERE seq = s; END IF;
  DELETE FROM @.decisions WHERE queue = q AND job_id = jid;
  INSERT INTO @.outcomes VALUES (q, jid, outcome, t + @.ms(ttl_ms))
    ON CONFLICT (queue, job_id) DO UPDATE SET outcome = excluded.outcome, until = excluded.until;
  IF rec <> '' THEN PERFORM @.record(jsonb_build_array(rec::jsonb)); END IF;
  -- The outcome travels with its announcement when it fits (a payload is
  -- at most 8,000 bytes); otherwise waiters read it.
  IF octet_length(outcome) + octet_length(jid) < 7900 THEN
    PERFORM pg_notify('@@.done', jid || E'\n' || outcome);
  ELSE
    PERFORM pg_notify('@@.done', jid);
  END IF;
  RETURN CASE WHEN there THEN 1 ELSE 2 END;
END $$;

-- `finish` for each job of a batch (one transaction, one commit); the
-- answers in order.
CREATE FUNCTION @.finish_many(q text, seqs bigint[], ws text[], jids text[], outcomes text[],
                              ttl_ms bigint, recs text[]) RETURNS integer[]
LANGUAGE plpgsql AS $$
DECLARE answers integer[] := '{}';
BEGIN
  FOR i IN 1 .. coalesce(array_length(seqs, 1), 0) LOOP
    answers := answers || @.finish(q, seqs[i], ws[i], jids[i], outcomes[i], ttl_ms, recs[i]);
  END LOOP;
  RETURN answers;
END $$;

-- Give row `s` back unrun, as message `msg`, at the end of its line.
CREATE FUNCTION @.hand_back(q text, s bigint, w text, msg text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE @.jobs SET seq = nextval(pg_get_serial_sequence('@.jobs', 'seq')), state = 0,
    worker = NULL, deadline = NULL, deliveries = 0, message = msg
    WHERE seq = s AND worker = w;
  PERFORM pg_notify('@@.jobs', q);
END $$;

-- Move row `s` to the dead letters with `reason` (its message as stored,
-- `raw` when the row is gone).
CREATE FUNCTION @.dead_letter(q text, s bigint, jid text, raw text, reason text, n integer,
                              w text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE msg text;
BEGIN
  DELETE FROM @.jobs WHERE seq = s RETURNING message INTO msg;
  INSERT INTO @.dead (queue, job_id, message, reason, deliveries, worker)
    VALUES (q, nullif(jid, ''), coalesce(msg, raw), reason, n, w);
END $$;

-- Park row `s`, job `jid`, held by `w`, for a person's decision, for up to
-- `wait_ms`: '0' parked; '1' and the decision when one is recorded already
-- (the row stays the worker's); '2' another worker took it over.
CREATE FUNCTION @.park(q text, s bigint, jid text, w text, wait_ms bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  owner text;
  there boolean;
  d text;
BEGIN
  -- The row first, as `decide` and `cancel` lock it: a decision comes
  -- before this park or after it, never between.
  SELECT worker INTO owner FROM @.jobs WHERE seq = s FOR UPDATE;
  there := FOUND;
  SELECT decision INTO d FROM @.decisions WHERE queue = q AND job_id = jid;
  IF FOUND THEN RETURN '1' || d; END IF;
  IF there AND owner IS DISTINCT FROM w THEN RETURN '2'; END IF;
  UPDATE @.jobs SET state = 3, worker = NULL, deadline = NULL,
    due_at = clock_timestamp() + @.ms(wait_ms) WHERE seq = s;
  RETURN '0';
END $$;

-- Put parked job `jid` back at the end of its line; whether it was parked.
CREATE FUNCTION @.unpark(q text, jid text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE @.jobs SET seq = nextval(pg_get_serial_sequence('@.jobs', 'seq')), state = 0,
    due_at = NULL, deliveries = 0
    WHERE queue = q AND job_id = jid AND state = 3;
  IF FOUND THEN PERFORM pg_notify('@@.jobs', q); RETURN true; END IF;
  RETURN false;
END $$;

-- Record decision `d` on job `jid`: 1 it was parked and is back in line; 4
-- recorded for when a worker takes it; 3 decided already; 2 it has an
-- outcome; 0 its id is unknown.
CREATE FUNCTION @.decide(q text, jid text, d text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN
  PERFORM 1 FROM @.jobs WHERE queue = q AND job_id = jid FOR UPDATE;
  IF EXISTS (SELECT 1 FROM @.outcomes WHERE queue = q AND job_id = jid AND until >= t) THEN
    RETURN 2;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM @.ids WHERE queue = q AND job_id = jid AND until >= t) THEN
    RETURN 0;
  END IF;
  INSERT INTO @.decisions VALUES (q, jid, d) ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN RETURN 3; END IF;
  IF @.unpark(q, jid) THEN RETURN 1; END IF;
  RETURN 4;
END $$;

-- Cancel job `jid` (the mark kept `ttl_ms`): 1 marked (a parked job goes
-- back in line, where a worker ends it); 2 it has an outcome; 0 unknown.
CREATE FUNCTION @.cancel(q text, jid text, ttl_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN
  PERFORM 1 FROM @.jobs WHERE queue = q AND job_id = jid FOR UPDATE;
  IF EXISTS (SELECT 1 FROM @.outcomes WHERE queue = q AND job_id = jid AND until >= t) THEN
    RETURN 2;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM @.ids WHERE queue = q AND job_id = jid AND until >= t) THEN
    RETURN 0;
  END IF;
  INSERT INTO @.cancels VALUES (q, jid, t + @.ms(ttl_ms))
    ON CONFLICT (queue, job_id) DO UPDATE SET until = excluded.until;
  PERFORM @.unpark(q, jid);
  RETURN 1;
END $$;

-- Move up to `n` due delayed jobs to their lines, and put up to `n` parked
-- jobs past their deadline back in line, decided expired; how many moved.
CREATE FUNCTION @.promote(q text, n integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  moved bigint;
  expired bigint;
  t timestamptz := clock_timestamp();
BEGIN
  WITH due AS (
    SELECT j.seq FROM @.jobs j WHERE j.queue = q AND j.state = 2 AND j.due_at <= t
    ORDER BY j.due_at LIMIT n FOR UPDATE SKIP LOCKED)
  UPDATE @.jobs j SET seq = nextval(pg_get_serial_sequence('@.jobs', 'seq')), state = 0,
    due_at = NULL
  FROM due WHERE j.seq = due.seq;
  GET DIAGNOSTICS moved = ROW_COUNT;
  WITH due AS (
    SELECT j.seq, j.job_id, j.due_at FROM @.jobs j WHERE j.queue = q AND j.state = 3
      AND j.due_at <= t ORDER BY j.due_at LIMIT n FOR UPDATE SKIP LOCKED),
  decided AS (
    INSERT INTO @.decisions
      SELECT q, due.job_id, json_build_object('decision', 'expired',
                                              'deadline_ms', @.epoch_ms(due.due_at))::text
      FROM due ON CONFLICT DO NOTHING)
  UPDATE @.jobs j SET seq = nextval(pg_get_serial_sequence('@.jobs', 'seq')), state = 0,
    due_at = NULL, deliveries = 0
  FROM due WHERE j.seq = due.seq;
  GET DIAGNOSTICS expired = ROW_COUNT;
  IF moved + expired > 0 THEN PERFORM pg_notify('@@.jobs', q); END IF;
  RETURN moved + expired;
END $$;

-- The queue's state as one JSON object.
CREATE FUNCTION @.status(q text, listed integer) RETURNS text LANGUAGE sql AS $$
  SELECT json_build_object(
    'waiting', (SELECT coalesce(json_agg(json_build_array(p, n)), '[]')
                FROM (SELECT priority AS p, count(*) AS n FROM @.jobs
                      WHERE queue = q AND state = 0 GROUP BY priority) w),
    'in_flight', (SELECT count(*) FROM @.jobs WHERE queue = q AND state = 1),
    'delayed', (SELECT count(*) FROM @.jobs WHERE queue = q AND state = 2),
    'dead', (SELECT count(*) FROM @.dead WHERE queue = q),
    'workers', (SELECT coalesce(json_agg(worker ORDER BY worker), '[]') FROM @.workers
                WHERE queue = q AND alive_until >= clock_timestamp()),
    'running', (SELECT coalesce(json_agg(report ORDER BY job_id), '[]') FROM @.progress
                WHERE queue = q),
    'awaiting', (SELECT coalesce(json_agg(json_build_array(job_id, @.epoch_ms(due_at))
                                          ORDER BY due_at), '[]')
                 FROM (SELECT job_id, due_at FROM @.jobs WHERE queue = q AND state = 3
                       ORDER BY due_at LIMIT listed) a)
  )::text
$$;

-- Idempotency: the stored result of (`sk`, `k`) (0, result); or its lock
-- taken with value `v` for `lock_ms` (1, fence); or taken over from a holder
-- worker whose heartbeat ran out (3, fence, holder); or the ms the live
-- holder's lock has left (2, ms).
CREATE FUNCTION @.idem_claim(sk text, k text, v text, lock_ms bigint)
RETURNS TABLE (o_state integer, o_text text, o_num bigint)
LANGUAGE plpgsql AS $$
DECLARE
  r @.idem;
  holder_worker text;
  alive timestamptz;
  t timestamptz := clock_timestamp();
BEGIN
  INSERT INTO @.idem (skill, key) VALUES (sk, k) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM @.idem WHERE skill = sk AND key = k FOR UPDATE;
  IF r.result IS NOT NULL AND r.result_until >= t THEN
    RETURN QUERY SELECT 0, r.result, 0::bigint;
    RETURN;
  END IF;
  IF r.holder IS NULL OR r.lock_until < t THEN
    UPDATE @.idem SET holder = v, lock_until = t + @.ms(lock_ms) WHERE skill = sk AND key = k;
    RETURN QUERY SELECT 1, NULL::text, nextval('@.fences');
    RETURN;
  END IF;
  IF position(' ' in r.holder) > 0 THEN
    holder_worker := substr(r.holder, position(' ' in r.holder) + 1);
    SELECT alive_until INTO alive FROM @.workers WHERE worker = holder_worker;
    IF alive IS NULL OR alive < t THEN
      UPDATE @.idem SET holder = v, lock_until = t + @.ms(lock_ms) WHERE skill = sk AND key = k;
      RETURN QUERY SELECT 3, holder_worker, nextval('@.fences');
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT 2, NULL::text, greatest(1, @.epoch_ms(r.lock_until) - @.epoch_ms(t));
END $$;

-- Idempotency: store `stored` (when not empty) for `ttl_ms` when the lock
-- still holds `v`, or no one holds it and no result is stored; release the
-- lock if it is `v`'s (1), else 0.
CREATE FUNCTION @.idem_finish(sk text, k text, v text, stored text, ttl_ms bigint)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  r @.idem;
  held boolean;
  ours boolean;
  t timestamptz := clock_timestamp();
BEGIN
  SELECT * INTO r FROM @.idem WHERE skill = sk AND key = k FOR UPDATE;
  IF NOT FOUND THEN
    IF stored <> '' THEN
      INSERT INTO @.idem VALUES (sk, k, NULL, NULL, stored, t + @.ms(ttl_ms))
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN 0;
  END IF;
  held := r.holder IS NOT NULL AND r.lock_until >= t;
  ours := held AND r.holder = v;
  IF stored <> '' AND (ours OR (NOT held AND (r.result IS NULL OR r.result_until < t))) THEN
    UPDATE @.idem SET result = stored, result_until = t + @.ms(ttl_ms)
      WHERE skill = sk AND key = k;
  END IF;
  IF ours THEN
    UPDATE @.idem SET holder = NULL, lock_until = NULL WHERE skill = sk AND key = k;
    RETURN 1;
  END IF;
  RETURN 0;
END $$;

-- Rate limit: admit one job of `sk` if fewer than `max` were admitted in
-- the last `window_ms` (0), else the ms until the oldest leaves the window.
CREATE FUNCTION @.admit(sk text, max integer, window_ms bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  c integer;
  first timestamptz;
  t timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('@@.rate'), hashtext(sk));
  t := clock_timestamp();
  DELETE FROM @.rate WHERE skill = sk AND at <= t - @.ms(window_ms);
  SELECT count(*), min(at) INTO c, first FROM @.rate WHERE skill = sk;
  IF c < max THEN
    INSERT INTO @.rate VALUES (sk, t);
    RETURN 0;
  END IF;
  RETURN greatest(1, @.epoch_ms(first + @.ms(window_ms)) - @.epoch_ms(t));
END $$;

-- Forget what has lapsed, and records past the newest `records_max`: run
-- by one worker at a time (the others skip it).
CREATE FUNCTION @.sweep(records_max bigint, runs_kept_ms bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('@@.sweep')) THEN RETURN; END IF;
  DELETE FROM @.ids WHERE until < t;
  DELETE FROM @.outcomes WHERE until < t;
  DELETE FROM @.cancels WHERE until < t;
  DELETE FROM @.once WHERE until < t;
  DELETE FROM @.artifacts WHERE until < t;
  DELETE FROM @.idem WHERE (result_until IS NULL OR result_until < t)
                       AND (lock_until IS NULL OR lock_until < t);
  DELETE FROM @.rate WHERE at < t - interval '1 hour';
  DELETE FROM @.workers WHERE alive_until < t - interval '1 day';
  DELETE FROM @.records WHERE id <= (SELECT max(id) FROM @.records) - records_max;
  DELETE FROM @.runs WHERE saved_at < t - @.ms(runs_kept_ms);
END $$;
"#;

/// `sql` for schema `schema` (checked already: see [`check_name`]).
pub(super) fn in_schema(sql: &str, schema: &str) -> String {
    sql.replace("@@", schema)
        .replace("@.", &format!("\"{schema}\"."))
}

/// Whether `name` may name a schema: 1 to 48 lowercase ASCII letters, digits
/// or `_`, not starting with a digit (quoted, it needs no escaping; the
/// channels named after it stay within PostgreSQL's 63 bytes).
pub(super) fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "schema `{name}` must be 1 to 48 lowercase letters, digits or `_`, not starting with a digit"
        ))
    }
}

/// The SQL that brings schema `schema` from version `from` to the latest,
/// run in one transaction under an advisory lock (so workers that start
/// together migrate once): each migration not applied yet, and its row in
/// `migrations`.
pub(super) fn pending(schema: &str, from: i32) -> Vec<(i32, String)> {
    MIGRATIONS
        .iter()
        .filter(|(v, _)| *v > from)
        .map(|(v, sql)| (*v, in_schema(sql, schema)))
        .collect()
}

/// The newest version this build knows.
pub(super) fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |(v, _)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_checked_and_placed() {
        assert!(check_name("skill").is_ok());
        assert!(check_name("fleet_2").is_ok());
        for bad in ["", "Skill", "a-b", "1a", "a\"b", &"x".repeat(49)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            in_schema("SELECT @.f(); NOTIFY @@.jobs", "s"),
            "SELECT \"s\".f(); NOTIFY s.jobs"
        );
        assert_eq!(latest(), 2);
        assert_eq!(pending("s", 1).len(), 1);
        assert_eq!(pending("s", 2).len(), 0);
    }
}
