CREATE INDEX records_job_id ON @.records (job_id, id);
CREATE INDEX records_skill_id ON @.records (skill, id);
CREATE INDEX records_status_id ON @.records (status, id);
CREATE INDEX records_caller_id ON @.records (caller, id);

-- The queue's state, with each live worker's heartbeat.
CREATE OR REPLACE FUNCTION @.status(q text, listed integer) RETURNS text LANGUAGE sql AS $$
  SELECT json_build_object(
    'waiting', (SELECT coalesce(json_agg(json_build_array(p, n)), '[]')
                FROM (SELECT priority AS p, count(*) AS n FROM @.jobs
                      WHERE queue = q AND state = 0 GROUP BY priority) w),
    'in_flight', (SELECT count(*) FROM @.jobs WHERE queue = q AND state = 1),
    'delayed', (SELECT count(*) FROM @.jobs WHERE queue = q AND state = 2),
    'dead', (SELECT count(*) FROM @.dead WHERE queue = q),
    'workers', (SELECT coalesce(json_agg(worker ORDER BY worker), '[]') FROM @.workers
                WHERE queue = q AND alive_until >= clock_timestamp()),
    'heartbeats', (SELECT coalesce(json_agg(json_build_array(worker, @.epoch_ms(alive_until))
                                            ORDER BY worker), '[]')
                   FROM @.workers WHERE queue = q AND alive_until >= clock_timestamp()),
    'running', (SELECT coalesce(json_agg(report ORDER BY job_id), '[]') FROM @.progress
                WHERE queue = q),
    'awaiting', (SELECT coalesce(json_agg(json_build_array(job_id, @.epoch_ms(due_at))
                                          ORDER BY due_at), '[]')
                 FROM (SELECT job_id, due_at FROM @.jobs WHERE queue = q AND state = 3
                       ORDER BY due_at LIMIT listed) a)
  )::text
$$;
