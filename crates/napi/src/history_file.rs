//! An extension's per-task `history_item.json` written as Zoo Code writes it: the status rule,
//! the merge of a change into the record on disk, and the locked write (roo-store's
//! `history_file`).

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use napi::bindgen_prelude::AsyncTask;
use napi::Env;
use napi_derive::napi;
use roo_store::history_file::{self, Change};
use roo_store::StoreError;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

fn coded(e: StoreError) -> CodedError {
    let details = match &e {
        StoreError::DeltaRejected {
            task_id,
            disk_status,
            attempted_status,
        } => Some(json!({
            "taskId": task_id,
            "diskStatus": disk_status,
            "attemptedStatus": attempted_status,
        })),
        StoreError::InvalidTransition { from, to } => Some(json!({"from": from, "to": to})),
        _ => None,
    };
    let err = CodedError::core(e.code(), e);
    match details {
        Some(d) => err.with_details(d),
        None => err,
    }
}

/// `INVALID_ARGUMENT: <what>: expected <expected>, got <a kind>`.
fn invalid(what: &str, expected: &str, got: &Value) -> CodedError {
    CodedError::new(
        ErrorCode::InvalidArgument,
        format!("{what}: expected {expected}, got {}", roo_js::kind_of(got)),
    )
}

fn object(what: &str, v: Value) -> Result<Map<String, Value>, CodedError> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(invalid(what, "an object", &other)),
    }
}

/// `{ set, unset, checkStatus }` as a [`Change`]; `None` and `null` are none.
fn change_of(v: Option<Value>) -> Result<Option<Change>, CodedError> {
    let mut m = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => object("change", v)?,
    };
    let set = match m.remove("set") {
        None | Some(Value::Null) => Map::new(),
        Some(v) => object("change.set", v)?,
    };
    let unset = match m.remove("unset") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|k| match k {
                Value::String(s) => Ok(s),
                other => Err(invalid("change.unset", "field names", &other)),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(invalid("change.unset", "an array", &other)),
    };
    let check_status = match m.remove("checkStatus") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => b,
        Some(other) => return Err(invalid("change.checkStatus", "a boolean", &other)),
    };
    Ok(Some(Change {
        set,
        unset,
        check_status,
    }))
}

/// Throws `INVALID_TRANSITION` ("Invalid task status transition: a → b") unless a task may go
/// from status `from` (none: `active`) to `to`: active → delegated | completed | interrupted,
/// delegated → active, interrupted → completed. Staying is not a transition and throws too.
#[napi(
    catch_unwind,
    ts_args_type = "from: string | null | undefined, to: string"
)]
pub fn check_status_transition(env: Env, from: Option<String>, to: String) -> napi::Result<()> {
    history_file::check_transition(from.as_deref(), &to).map_err(|e| coded(e).into_napi(&env))
}

/// The record `history_item.json` would hold after `change` is applied to what the file holds
/// now (`disk`, as parsed; anything but an object with an `id` means no usable record, and then
/// `incoming` is the whole record). Throws `DELTA_REJECTED` (with `details`) when the change
/// moves the status in a way the state machine does not allow from the status on disk.
#[napi(
    catch_unwind,
    ts_args_type = "disk: unknown, incoming: HistoryItemRecord, change?: HistoryItemChange | null",
    ts_return_type = "HistoryItemRecord"
)]
pub fn merge_history_item<'env>(
    env: &'env Env,
    disk: Option<Value>,
    incoming: Value,
    change: Option<Value>,
) -> napi::Result<napi::Unknown<'env>> {
    let run = || -> Result<Map<String, Value>, CodedError> {
        let incoming = object("incoming", incoming)?;
        let change = change_of(change)?.unwrap_or_default();
        history_file::merge_change(disk.as_ref(), &incoming, &change).map_err(coded)
    };
    let merged = run().map_err(|e| e.into_napi(env))?;
    crate::to_js(env, &merged)
}

/// Write into the `history_item.json` at `file` under its `proper-lockfile` lock
/// (`<file>.lock`): `change` merged into what the file holds by then (`incoming` whole when it
/// holds no usable record), or without a change `incoming` whole. Resolves with what was written. Rejects with `DELTA_REJECTED` (nothing
/// written) when the record on disk reached a status the change may not move it from, with
/// `STORE_BUSY` when another writer keeps the lock.
#[napi(
    catch_unwind,
    ts_args_type = "file: string, incoming: HistoryItemRecord, change?: HistoryItemChange | null",
    ts_return_type = "Promise<HistoryItemRecord>"
)]
pub fn update_history_item(
    file: String,
    incoming: Value,
    change: Option<Value>,
) -> napi::Result<AsyncTask<Job<Map<String, Value>>>> {
    let parsed = object("incoming", incoming).and_then(|i| Ok((i, change_of(change)?)));
    Ok(Job::spawn(None, move |_| {
        let (incoming, change) = parsed?;
        history_file::update(&PathBuf::from(file), &incoming, change.as_ref()).map_err(coded)
    }))
}
