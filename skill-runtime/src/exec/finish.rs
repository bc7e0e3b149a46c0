//! The end of a job: its record (redacted), its stats, and the tracing event of
//! its outcome.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::exec::clock::{self, micros};
use crate::exec::policy::limits::{kept_in_record, recorded_size, truncated};
use crate::exec::redact::{redact_error, redact_in_place, scrub};
use crate::exec::runtime::Runtime;
use crate::exec::spare;
use crate::exec::state::{Done, State};
use crate::model::data::Data;
use crate::model::error::InvokeError;
use crate::model::record::{ErrorRecord, RunRecord, RunStatus, StepRun};
use crate::model::recorded::RecordedValue;
use crate::registry::rules::schema::property_names;
use crate::spare::room;

impl Runtime {
    /// Turn the job's state and outcome into its record, update the stats, and
    /// hand the record to the sink.
    pub(crate) fn finish(&self, mut st: Box<State>, result: &mut Result<Done, InvokeError>) {
        let inner = &*self.inner;
        // A job that succeeded ended at its last timed step (the output checks);
        // only building the result came after. Failures read the clock: some end
        // on a step that is not timed.
        let end = match result {
            Ok(_) => st.last,
            Err(_) => clock::now(),
        };
        let duration = end.saturating_duration_since(st.t0);
        if let Ok(done) = result
            && !done.result.replayed
        {
            done.result.metrics.duration_ms =
                u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        }
        let skill = st.skill.map(|i| &inner.registry.skills()[i]);
        match st.skill {
            Some(i) => inner.skills[i].stats.add(duration, result.is_err()),
            None => {
                inner.unresolved.fetch_add(1, Ordering::Relaxed);
            }
        }
        let (inputs, outputs) = match skill {
            Some(s) => (
                s.entry.manifest.redaction.inputs,
                s.entry.manifest.redaction.outputs,
            ),
            None => (&[][..], &[][..]),
        };
        let mut secrets = Vec::new();
        // Records are kept (in memory, by default): a value past the budget
        // is kept as its size, the job having seen the whole of it.
        let budget = inner.limits.max_record_value_bytes;
        let text_len = st.text_len;
        let params: RecordedValue = match st.text.take() {
            // Text that no stage parsed, with nothing to redact: kept as it
            // came (it decoded, so it is one JSON object; it is written out
            // as its value, on one line, whatever its blanks).
            Some(text) if inputs.is_empty() => RecordedValue::text(text),
            text => {
                let mut params = match text {
                    Some(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
                    None => std::mem::take(&mut st.target.params),
                };
                redact_in_place(&mut params, inputs, &mut secrets);
                // A skill that redacts inputs handles secrets: a field its
                // input does not declare (a misspelt `apiKey`, in a call its
                // schema refused) is redacted too, since nothing says it is
                // not one.
                if let (Some(s), false, Value::Object(map)) = (skill, inputs.is_empty(), &params) {
                    let declared = property_names(&s.input_schema, &s.input_schema);
                    let undeclared: Vec<String> = map
                        .keys()
                        .filter(|k| !declared.contains(*k))
                        .cloned()
                        .collect();
                    let undeclared: Vec<&str> = undeclared.iter().map(String::as_str).collect();
                    redact_in_place(&mut params, &undeclared, &mut secrets);
                }
                params.into()
            }
        };
        let params = match text_len {
            Some(bytes) if bytes > budget => truncated(Some(bytes)).into(),
            _ => params,
        };
        // What the run produced: its result's data, or the output its checks
        // rejected (kept, so a failed run does not lose what it found; the
        // error's copy is redacted already, and is again below, harmlessly).
        let produced = match &*result {
            Ok(done) => Some(done.result.data.clone()),
            Err(e) => e
                .rejected_output_shared()
                .map(|o| Data::from(Value::clone(o))),
        };
        let output = match produced {
            Some(data) if !outputs.is_empty() => {
                let mut o = data.to_value();
                redact_in_place(&mut o, outputs, &mut secrets);
                Some(Data::from(o))
            }
            other => other,
        }
        .map(|o| {
            let bytes = recorded_size(&o, inner.limits.max_depth);
            kept_in_record(o, bytes, budget)
        });
        let scrub = |text: String| scrub(text, &secrets);
        // The error the caller gets is redacted like the record: a redacted
        // input's value appears in neither.
        if let Err(e) = result
            && !inputs.is_empty()
        {
            redact_error(e, inputs, &secrets);
        }
        let error = result.as_ref().err().map(|e| ErrorRecord {
            code: e.code().to_owned(),
            message: scrub(e.to_string()),
        });
        // Scrubbed where they are, and moved once, into the record: each
        // move of the steps copies them whole.
        if !secrets.is_empty() {
            for a in st.attempts.iter_mut() {
                a.error = a.error.take().map(&scrub);
            }
            st.steps.map_details(&scrub);
        }
        crate::exec::trace::ended(
            &st.span,
            &crate::exec::trace::Ending {
                skill,
                error_code: error.as_ref().map(|e| e.code.as_str()),
                started_at: st.started_at,
                duration,
                stages: &st.steps,
                attempts: &st.attempts,
                replayed: st.replayed,
                params: &params,
                output: output.as_ref(),
            },
        );
        // The job's span as the event's parent, without entering it.
        let span = &st.span;
        match &error {
            None => tracing::info!(
                parent: span,
                status = "succeeded",
                duration_us = micros(duration)
            ),
            Some(e) => tracing::info!(
                parent: span,
                status = "failed",
                code = %e.code,
                duration_us = micros(duration)
            ),
        }
        let notes = match &*result {
            Ok(d) if !d.result.notes.is_empty() => d.result.notes.clone(),
            _ => Vec::new(),
        };
        // The handler's context is usually gone by now; a spawned task that
        // kept a clone of it leaves the invocation shared, and then the ids are
        // copied.
        // Where the job stopped, told to its watcher if the coalescing held
        // the last report back.
        let progress = st.inv.flush_progress();
        let told = st.inv.watch.record.clone();
        let inv = &mut *st.inv;
        let (job_id, trace_id, parent_job_id, caller, constraints, intent, scope) =
            match Arc::get_mut(inv) {
                // Taken field by field: unwrapping the whole invocation would
                // copy it out of its block first. (Held by others too, even
                // weakly, as a job's `Cancel` holds it, the parts are copied:
                // moving them out of `try_unwrap` there measured slower for
                // every job, the code laid out around it.)
                Some(inv) => (
                    std::mem::take(&mut inv.job_id),
                    std::mem::take(&mut inv.trace_id),
                    inv.parent_job_id.take(),
                    std::mem::take(&mut inv.caller),
                    std::mem::take(&mut inv.constraints),
                    inv.intent.take(),
                    inv.scope.take(),
                ),
                None => (
                    inv.job_id.clone(),
                    inv.trace_id.clone(),
                    inv.parent_job_id.clone(),
                    inv.caller.clone(),
                    inv.constraints.clone(),
                    inv.intent.clone(),
                    inv.scope.clone(),
                ),
            };
        // Written into its block (the thread's spare, if it has one:
        // `exec/spare.rs`), as the invocation was (`State::new`): built on
        // the stack and then given to `Arc::new`, its 800-odd bytes would be
        // copied whole.
        let mut block = spare::record_block();
        room(&mut block).write(RunRecord {
            progress,
            job_id,
            trace_id,
            parent_job_id,
            skill: match skill {
                Some(s) => Cow::Borrowed(s.name()),
                None => std::mem::take(&mut st.target.skill),
            },
            version: skill.map(|s| s.entry.manifest.version),
            intent,
            scope,
            created_at: st.target.created_at,
            caller,
            params,
            constraints,
            idempotency_key: st.key.take(),
            replayed: st.replayed,
            started_at: st.started_at,
            completed_at: st.started_at + duration,
            duration_us: micros(duration),
            status: RunStatus::of(result),
            steps: st.steps.take(),
            attempts: std::mem::take(&mut st.attempts),
            output,
            error,
            notes,
            pipeline_steps: if st.pipeline_steps.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut st.pipeline_steps)
                    .into_iter()
                    .map(|s| StepRun { output: None, ..s })
                    .collect()
            },
        });
        // SAFETY: written just above, in place.
        let record = unsafe { block.assume_init() };
        if let Some(told) = told {
            told(&record);
        }
        inner.sink.record(record);
        // The state's block, and its invocation's, kept for the next job
        // on this thread (`crate::spare`).
        st.let_go();
    }
}
