//! JSON-RPC batches (a line holding an array of messages). MCP had them at protocol 2025-03-26
//! only, where a server must accept them; rmcp answers every array with -32600. So, when the
//! handshake agreed 2025-03-26, the line filter takes a batch apart, hands rmcp its messages
//! one by one, and the forwarder gathers their responses into one array; at any other version
//! (or before the handshake) a batch gets a -32600 that says why. The two share a [`Session`].

use std::sync::{Mutex, MutexGuard, PoisonError};

use rmcp::model::ProtocolVersion;
use rmcp::model::{CallToolRequestParams, ClientJsonRpcMessage, InitializeRequestParams};
use serde::Deserialize as _;
use serde_json::{Value, json};

/// What the filter (client to rmcp) and the forwarder (rmcp to client) know of the session.
#[derive(Default)]
pub(super) struct Session(Mutex<State>);

#[derive(Default)]
struct State {
    /// The ids of `initialize` requests whose answer has not gone out yet.
    initializing: Vec<Value>,
    /// The protocol version the handshake agreed, once its answer went out.
    version: Option<String>,
    /// The batches still waiting for some of their responses.
    open: Vec<Vec<Slot>>,
}

/// A place in a batch's answer: the id of a request rmcp has yet to answer, or the answer.
enum Slot {
    Waiting(Value),
    Answered(Value),
}

/// What the filter does with a batch.
pub(super) struct Split {
    /// The messages to hand rmcp, one line each (with its `\n`).
    pub(super) to_rmcp: Vec<Vec<u8>>,
    /// A line to send the client now: a refusal, or the answer of a batch that needs none of
    /// rmcp's (all of its requests refused).
    pub(super) answer: Option<Vec<u8>>,
}

/// What the forwarder does with a line of rmcp's.
pub(super) enum Outgoing {
    /// Send it as it is.
    Pass,
    /// A response that belongs to a batch still waiting for others: hold it.
    Held,
    /// The whole answer of a batch, which this response completed.
    Batch(Vec<u8>),
}

impl Session {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a message the client sent on its own line: an `initialize` request, whose answer
    /// tells the version, or the cancellation of a request of a batch (rmcp does not answer a
    /// cancelled request). Returns a batch's answer that the cancellation completed.
    pub(super) fn client_sent(&self, message: &Value) -> Option<Vec<u8>> {
        let mut state = self.state();
        match message["method"].as_str() {
            Some("initialize") if !message["id"].is_null() => {
                state.initializing.push(message["id"].clone());
                None
            }
            Some("notifications/cancelled") => {
                state.cancel(&message["params"]["requestId"]).and_then(answer)
            }
            _ => None,
        }
    }

    /// Takes the batch `items` apart, or refuses it.
    pub(super) fn split(&self, items: Vec<Value>) -> Split {
        let mut state = self.state();
        let batches = ProtocolVersion::V_2025_03_26.as_str();
        let refusal = match state.version.as_deref() {
            _ if items.is_empty() => Some("an empty batch (an array with no message)".to_string()),
            Some(version) if version == batches => None,
            Some(version) => Some(format!(
                "a batch (an array of messages), which protocol {version} does not have (only \
                 {batches} had batches): send one message per line"
            )),
            None => Some(format!(
                "a batch (an array of messages) before the handshake; only protocol {batches} \
                 has batches, once initialize agreed it: send one message per line"
            )),
        };
        if let Some(reason) = refusal {
            let line = line(&error(&Value::Null, &format!("Invalid request: {reason}")));
            return Split { to_rmcp: Vec::new(), answer: Some(line) };
        }
        // A request cancelled within its own batch is neither run nor answered (rmcp would run
        // it, or drop it unanswered and leave the batch waiting).
        let cancelled: Vec<Value> = items
            .iter()
            .filter(|item| item["method"] == "notifications/cancelled")
            .map(|item| item["params"]["requestId"].clone())
            .collect();
        let (mut slots, mut to_rmcp, mut ids) = (Vec::new(), Vec::new(), Vec::<Value>::new());
        for item in items {
            let id = match &item["id"] {
                id @ (Value::String(_) | Value::Number(_)) => id.clone(),
                _ => Value::Null,
            };
            let request = item["method"].is_string() && !id.is_null();
            if request && cancelled.contains(&id) {
                continue;
            }
            let waiting = |slot: &Slot| matches!(slot, Slot::Waiting(w) if *w == id);
            let refused = if item["method"] == "initialize" {
                Some(invalid("initialize cannot be part of a batch", &id))
            } else if request && (ids.contains(&id) || state.open.iter().flatten().any(waiting)) {
                Some(invalid("its id is already one of a request not answered yet", &id))
            } else if let Some(error) = invalid_params(&item) {
                Some(error)
            } else if serde_json::from_value::<ClientJsonRpcMessage>(item.clone()).is_err() {
                Some(invalid("not a JSON-RPC message of MCP", &id))
            } else {
                None
            };
            if request {
                ids.push(id.clone());
            }
            match refused {
                Some(error) => slots.push(Slot::Answered(error)),
                None if cancelled.contains(&item["params"]["requestId"]) => {}
                None => {
                    // A request gets a response; a notification, or a response of the
                    // client's, none.
                    if request {
                        slots.push(Slot::Waiting(id));
                    } else if item["method"] == "notifications/cancelled" {
                        state.cancel(&item["params"]["requestId"]);
                    }
                    to_rmcp.push(line(&item));
                }
            }
        }
        let answer = match slots.iter().any(|s| matches!(s, Slot::Waiting(_))) {
            true => {
                state.open.push(slots);
                None
            }
            false => answer(slots),
        };
        Split { to_rmcp, answer }
    }

    /// Looks at a line rmcp sends: the answer to `initialize` gives the version; a response to
    /// a request of a batch is held until the batch is answered whole.
    pub(super) fn rmcp_sent(&self, line: &[u8]) -> Outgoing {
        let mut state = self.state();
        if state.initializing.is_empty() && state.open.is_empty() {
            return Outgoing::Pass;
        }
        let Ok(message) = serde_json::from_slice::<Value>(line) else { return Outgoing::Pass };
        let id = &message["id"];
        if message.get("result").is_none() && message.get("error").is_none() || id.is_null() {
            return Outgoing::Pass;
        }
        if let Some(at) = state.initializing.iter().position(|i| i == id) {
            state.initializing.remove(at);
            if let Some(version) = message["result"]["protocolVersion"].as_str() {
                state.version = Some(version.to_string());
            }
            return Outgoing::Pass;
        }
        let waiting = |slot: &Slot| matches!(slot, Slot::Waiting(w) if w == id);
        let Some(batch) = state.open.iter().position(|slots| slots.iter().any(waiting)) else {
            return Outgoing::Pass;
        };
        let slot = state.open[batch].iter_mut().find(|s| waiting(s)).expect("found above");
        *slot = Slot::Answered(message);
        if state.open[batch].iter().any(|s| matches!(s, Slot::Waiting(_))) {
            return Outgoing::Held;
        }
        let slots = state.open.remove(batch);
        answer(slots).map_or(Outgoing::Held, Outgoing::Batch)
    }
}

impl State {
    /// Forgets the request `id` of an open batch, which will not be answered; returns the
    /// batch if that was the last it waited for.
    fn cancel(&mut self, id: &Value) -> Option<Vec<Slot>> {
        let waiting = |slot: &Slot| matches!(slot, Slot::Waiting(w) if w == id);
        let batch = self.open.iter().position(|slots| slots.iter().any(waiting))?;
        self.open[batch].retain(|s| !waiting(s));
        let done = !self.open[batch].iter().any(|s| matches!(s, Slot::Waiting(_)));
        done.then(|| self.open.remove(batch))
    }
}

/// The answer line of a batch whose every slot is answered: the array of the answers, in the
/// order of the batch; `None` when it had no request (nothing is sent then).
fn answer(slots: Vec<Slot>) -> Option<Vec<u8>> {
    let answers: Vec<Value> = slots
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Answered(answer) => Some(answer),
            Slot::Waiting(_) => None,
        })
        .collect();
    (!answers.is_empty()).then(|| line(&Value::Array(answers)))
}

/// A JSON-RPC "Invalid request" error (-32600) for `id`.
fn error(id: &Value, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32600, "message": message } })
}

/// The error of a batch's message refused for `reason`.
fn invalid(reason: &str, id: &Value) -> Value {
    error(id, &format!("Invalid request in a batch: {reason}"))
}

/// A JSON-RPC "Invalid params" error (-32602) for a request of a method the server has whose
/// params do not parse (rmcp takes such a request for a method of another name, and answers
/// that it has no such method); `None` for any other message.
pub(super) fn invalid_params(message: &Value) -> Option<Value> {
    let id = &message["id"];
    let params = &message["params"];
    let parsed = match message["method"].as_str()? {
        _ if id.is_null() => return None,
        "tools/call" => CallToolRequestParams::deserialize(params).err(),
        "initialize" => InitializeRequestParams::deserialize(params).err(),
        _ => None,
    }?;
    let method = &message["method"];
    let text = format!("Invalid params: the params of {method} do not parse: {parsed}");
    Some(json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602, "message": text } }))
}

/// `value` as one line, with its `\n`.
pub(super) fn line(value: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).expect("a JSON value always serialises");
    line.push(b'\n');
    line
}
