//! The two message streams of a task: UI messages (`say`/`ask`) and API history (user turns, assistant
//! replies with their tool calls), with the `api_req_started` accounting between them.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::{num, Clock, Gen};
use crate::text;

/// A block of the next user turn.
pub(super) enum UBlock {
    Text(String),
    Result {
        id: String,
        name: &'static str,
        desc: String,
        body: String,
    },
}

/// A tool call of the assistant.
pub(super) struct Call {
    pub(super) id: String,
    pub(super) name: &'static str,
    pub(super) input: Value,
}

/// Appends `v` to a JSON array being written (without its brackets).
fn push_json(buf: &mut Vec<u8>, n: &mut usize, v: &Value) {
    if *n > 0 {
        buf.push(b',');
    }
    *n += 1;
    serde_json::to_writer(&mut *buf, v).expect("serialising a JSON value into memory cannot fail");
}

/// A tool call as the XML eras write it in the assistant text.
fn xml_call(call: &Call) -> String {
    let mut s = format!("<{}>\n", call.name);
    if let Value::Object(m) = &call.input {
        for (k, v) in m {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let _ = writeln!(s, "<{k}>{v}</{k}>");
        }
    }
    let _ = write!(s, "</{}>", call.name);
    s
}

impl Gen<'_> {
    pub(super) fn push_ui(&mut self, v: &Value) {
        push_json(&mut self.ui, &mut self.ui_n, v);
    }

    pub(super) fn push_api(&mut self, v: &Value) {
        push_json(&mut self.api, &mut self.api_n, v);
    }

    pub(super) fn say(
        &mut self,
        ts: u64,
        kind: &str,
        text: Option<String>,
        partial: Option<bool>,
        checkpoint: Option<Value>,
    ) {
        let mut m = Map::new();
        m.insert("ts".into(), ts.into());
        m.insert("type".into(), "say".into());
        m.insert("say".into(), kind.into());
        if let Some(t) = text {
            m.insert("text".into(), Value::String(t));
        }
        if let Some(p) = partial {
            m.insert("partial".into(), p.into());
        }
        if let Some(c) = checkpoint {
            m.insert("checkpoint".into(), c);
        }
        self.push_ui(&Value::Object(m));
    }

    pub(super) fn ask(
        &mut self,
        ts: u64,
        kind: &str,
        text: String,
        partial: Option<bool>,
        protected: bool,
        answered: bool,
    ) {
        let mut m = Map::new();
        m.insert("ts".into(), ts.into());
        m.insert("type".into(), "ask".into());
        m.insert("ask".into(), kind.into());
        m.insert("text".into(), Value::String(text));
        if let Some(p) = partial {
            m.insert("partial".into(), p.into());
        }
        if protected && self.st.protected {
            m.insert("isProtected".into(), false.into());
        }
        if answered && self.st.answered {
            m.insert("isAnswered".into(), true.into());
        }
        self.push_ui(&Value::Object(m));
    }

    pub(super) fn call_id(&mut self) -> String {
        self.call_seq += 1;
        if self.model.anthropic {
            format!("toolu_01{}", self.rng.base62(22))
        } else {
            format!("call_{}", self.rng.base62(24))
        }
    }

    /// Writes the pending user turn to the API history; returns the rendered request text and its size.
    fn emit_user(&mut self, ts: u64, env: Option<String>) -> (Option<String>, usize) {
        let blocks = std::mem::take(&mut self.pending);
        let st = self.st;
        let mut request = String::new();
        let mut size = 0usize;
        let mut add_req = |s: &str, request: &mut String| {
            size += s.len();
            if st.request {
                if !request.is_empty() {
                    request.push_str("\n\n");
                }
                request.push_str(s);
            }
        };
        if st.v2 {
            let mut tool_parts = Vec::new();
            let mut user_parts = Vec::new();
            for b in blocks {
                match b {
                    UBlock::Text(t) => {
                        add_req(&t, &mut request);
                        user_parts.push(json!({"type": "text", "text": t}));
                    }
                    UBlock::Result { id, name, body, .. } => {
                        add_req(&body, &mut request);
                        tool_parts.push(json!({"type": "tool-result", "toolCallId": id, "toolName": name, "output": {"type": "text", "value": body}}));
                    }
                }
            }
            if let Some(e) = env {
                add_req(&e, &mut request);
                user_parts.push(json!({"type": "text", "text": e}));
            }
            if !tool_parts.is_empty() {
                self.push_api(&json!({"role": "tool", "content": tool_parts, "ts": ts}));
            }
            if !user_parts.is_empty() {
                self.push_api(&json!({"role": "user", "content": user_parts, "ts": ts + 1}));
            }
            return (None, size);
        }
        let mut content = Vec::new();
        for b in blocks {
            match b {
                UBlock::Text(t) => {
                    add_req(&t, &mut request);
                    content.push(json!({"type": "text", "text": t}));
                }
                UBlock::Result { id, desc, body, .. } => {
                    if st.xml {
                        let head = format!("[{desc}] Result:");
                        add_req(&head, &mut request);
                        add_req(&body, &mut request);
                        content.push(json!({"type": "text", "text": head}));
                        content.push(json!({"type": "text", "text": body}));
                    } else {
                        add_req(&body, &mut request);
                        content.push(
                            json!({"type": "tool_result", "tool_use_id": id, "content": body}),
                        );
                    }
                }
            }
        }
        if let Some(e) = env {
            add_req(&e, &mut request);
            content.push(json!({"type": "text", "text": e}));
        }
        let content = if !st.api_ts && self.api_n == 0 && self.rng.chance(0.5) {
            Value::String(request.clone())
        } else {
            Value::Array(content)
        };
        let mut m = Map::new();
        m.insert("role".into(), "user".into());
        m.insert("content".into(), content);
        if st.api_ts {
            m.insert("ts".into(), ts.into());
        }
        self.push_api(&Value::Object(m));
        (st.request.then_some(request), size)
    }

    /// Starts a turn: flushes the pending user content and returns (request, input size).
    pub(super) fn begin(&mut self, clock: &mut Clock) -> (Option<String>, usize) {
        let ts = clock.next(&mut self.rng);
        let env = if self.pending_env {
            Some(self.env_details(ts))
        } else {
            None
        };
        if let Some(e) = &env {
            self.env_len = e.len();
        }
        let r = self.emit_user(ts, env);
        self.first_turn = false;
        self.pending_env = true;
        r
    }

    pub(super) fn api_req(
        &mut self,
        clock: &mut Clock,
        request: Option<String>,
        in_bytes: usize,
        out_bytes: usize,
    ) {
        let ts = clock.next(&mut self.rng);
        let new_in = (in_bytes / 4 + 10) as u64;
        let out = (out_bytes / 4 + 30) as u64;
        let m = self.model;
        let (tokens_in, cw, cr, cost) = if m.anthropic {
            let uncached = self.rng.range(2, 12);
            let cw = new_in;
            let cr = self.ctx_tokens;
            let cost = (uncached as f64 * m.prices[0]
                + out as f64 * m.prices[1]
                + cw as f64 * m.prices[2]
                + cr as f64 * m.prices[3])
                / 1e6;
            let tin = if self.st.tokens_total {
                uncached + cw + cr
            } else {
                uncached
            };
            (tin, cw, cr, cost)
        } else {
            let total = self.ctx_tokens + new_in;
            let cr = self.ctx_tokens / 128 * 128;
            let cost = ((total - cr) as f64 * m.prices[0]
                + cr as f64 * m.prices[3]
                + out as f64 * m.prices[1])
                / 1e6;
            (total, 0, cr, cost)
        };
        self.ctx_tokens += new_in + out;
        if self.ctx_tokens > 160_000 {
            self.ctx_tokens = self.rng.range(20_000, 40_000);
        }
        self.sums[0] += tokens_in;
        self.sums[1] += out;
        self.sums[2] += cw;
        self.sums[3] += cr;
        self.cost += cost;
        let mut info = Map::new();
        if let Some(r) = request {
            info.insert("request".into(), Value::String(r));
        }
        if self.st.api_protocol {
            info.insert(
                "apiProtocol".into(),
                if m.anthropic { "anthropic" } else { "openai" }.into(),
            );
        }
        let mut usage = Map::new();
        usage.insert("tokensIn".into(), tokens_in.into());
        usage.insert("tokensOut".into(), out.into());
        usage.insert("cacheWrites".into(), cw.into());
        usage.insert("cacheReads".into(), cr.into());
        usage.insert("cost".into(), num(cost));
        if self.st.finished_separate {
            self.say(
                ts,
                "api_req_started",
                Some(Value::Object(info).to_string()),
                None,
                None,
            );
            let fin = clock.next(&mut self.rng);
            self.say(
                fin,
                "api_req_finished",
                Some(Value::Object(usage).to_string()),
                None,
                None,
            );
        } else {
            info.extend(usage);
            self.say(
                ts,
                "api_req_started",
                Some(Value::Object(info).to_string()),
                None,
                None,
            );
        }
    }

    /// Whether the model's reasoning goes inside the assistant text as `<thinking>` (the XML eras' older
    /// Claude models) rather than in a `reasoning` UI message and a block of its own.
    fn inline_thinking(&self) -> bool {
        self.st.xml && matches!(self.p.model, 0 | 1)
    }

    /// Shows the turn's reasoning in the UI, unless it goes inline in the assistant text.
    pub(super) fn say_reasoning(&mut self, clock: &mut Clock, reasoning: Option<&str>) {
        if let (false, Some(r)) = (self.inline_thinking(), reasoning) {
            let ts = clock.next(&mut self.rng);
            self.say(ts, "reasoning", Some(r.to_string()), Some(false), None);
        }
    }

    /// Writes the assistant message to the API history.
    pub(super) fn emit_assistant(
        &mut self,
        ts: u64,
        reasoning: Option<&str>,
        prose: Option<&str>,
        call: &Call,
    ) {
        let st = self.st;
        let inline_thinking = self.inline_thinking();
        if st.xml {
            let mut t = String::new();
            if let (true, Some(r)) = (inline_thinking, reasoning) {
                let _ = write!(t, "<thinking>\n{r}\n</thinking>\n\n");
            }
            if let Some(p) = prose {
                t.push_str(p);
                t.push_str("\n\n");
            }
            t.push_str(&xml_call(call));
            let mut m = Map::new();
            m.insert("role".into(), "assistant".into());
            m.insert("content".into(), json!([{"type": "text", "text": t}]));
            if st.api_ts {
                m.insert("ts".into(), ts.into());
            }
            self.push_api(&Value::Object(m));
            return;
        }
        let mut content = Vec::new();
        if let Some(r) = reasoning {
            if st.v2 {
                content.push(json!({"type": "reasoning", "text": r}));
            } else if self.model.anthropic {
                let n = self.rng.between(120, 400);
                let sig = self.rng.base64(n);
                content.push(json!({"type": "thinking", "thinking": r, "signature": sig}));
            } else {
                content.push(json!({"type": "reasoning", "text": r, "summary": []}));
            }
        }
        if let Some(p) = prose {
            content.push(json!({"type": "text", "text": p}));
        }
        if st.v2 {
            if !self.model.anthropic && self.rng.chance(0.25) {
                let n = self.rng.between(200, 900);
                let enc = self.rng.base64(n);
                let id = format!("rs_{}", self.rng.hex(48));
                let sum = text::reasoning(self.lang(), &self.slots(), &mut self.rng, 1);
                self.push_api(&json!({"type": "reasoning", "encrypted_content": enc, "ts": ts - 1, "id": id, "summary": [{"type": "summary_text", "text": sum}]}));
            }
            content.push(json!({"type": "tool-call", "toolCallId": call.id, "toolName": call.name, "input": call.input}));
        } else {
            content.push(
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}),
            );
        }
        self.push_api(&json!({"role": "assistant", "content": content, "ts": ts}));
    }

    pub(super) fn checkpoint(&mut self, ts: u64) {
        let (from, to) = (self.rng.hex(40), self.rng.hex(40));
        let cp = match self.st.checkpoint {
            1 => json!({"isFirst": self.rng.chance(0.1), "from": from, "to": to}),
            2 => json!({"from": from, "to": to, "suppressMessage": false}),
            _ => return,
        };
        self.say(ts, "checkpoint_saved", Some(to), None, Some(cp));
    }
}
