//! Rendering phase: turns one planned task into its files, in the shape of its era.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::md5::md5_hex;
use crate::plan::{ChildEvent, Model, TaskPlan, MODELS};
use crate::rng::Rng;
use crate::text::{self, Lang, Slots, Workspace};
use crate::time::{iso, ms};
use crate::Era;

/// What rendering one task produced.
pub struct Rendered {
    pub history_item: Option<Value>,
    pub bytes: u64,
}

/// Era-dependent switches.
#[derive(Clone, Copy)]
struct Style {
    xml: bool,
    request: bool,
    finished_separate: bool,
    api_ts: bool,
    api_protocol: bool,
    user_tag: &'static str,
    working_header: bool,
    subtask_as_text: bool,
    delegation: bool,
    metadata: bool,
    history: bool,
    v2: bool,
    answered: bool,
    protected: bool,
    todos: bool,
    checkpoint: u8,
    env_extras: bool,
    time_iso: bool,
    tabs_comma: bool,
    say_tool_readonly: bool,
    tokens_total: bool,
}

fn style(era: Era, ts: u64) -> Style {
    let base = Style {
        xml: true,
        request: true,
        finished_separate: false,
        api_ts: true,
        api_protocol: false,
        user_tag: "task",
        working_header: false,
        subtask_as_text: false,
        delegation: false,
        metadata: false,
        history: false,
        v2: false,
        answered: false,
        protected: false,
        todos: false,
        checkpoint: 1,
        env_extras: true,
        time_iso: false,
        tabs_comma: false,
        say_tool_readonly: false,
        tokens_total: false,
    };
    match era {
        Era::ClaudeDev2024 => Style {
            finished_separate: true,
            api_ts: false,
            working_header: true,
            checkpoint: 0,
            env_extras: false,
            say_tool_readonly: true,
            ..base
        },
        Era::StackXmlOld => Style {
            working_header: true,
            subtask_as_text: true,
            ..base
        },
        Era::StackXml => Style {
            api_protocol: ts >= ms(2025, 7, 8),
            metadata: true,
            protected: ts >= ms(2025, 6, 15),
            todos: ts >= ms(2025, 7, 1),
            ..base
        },
        Era::Native | Era::HistoryItem | Era::V2Wrapper => Style {
            xml: false,
            request: false,
            api_protocol: true,
            user_tag: "user_message",
            delegation: true,
            metadata: true,
            history: era != Era::Native,
            v2: era == Era::V2Wrapper,
            answered: true,
            protected: true,
            todos: true,
            checkpoint: 2,
            time_iso: true,
            tabs_comma: true,
            tokens_total: true,
            ..base
        },
    }
}

enum UBlock {
    Text(String),
    Result {
        id: String,
        name: &'static str,
        desc: String,
        body: String,
    },
}

enum UiTool {
    /// `ask:"tool"` (or `say:"tool"` for read-only tools in the claude-dev era).
    Tool {
        json: Value,
        edit: bool,
    },
    Command {
        cmd: String,
        output: String,
    },
    Followup {
        question: String,
        suggest: Vec<String>,
        answer: String,
    },
}

struct Call {
    id: String,
    name: &'static str,
    input: Value,
}

struct Clock {
    t: u64,
    end: u64,
    step: u64,
}

impl Clock {
    fn new(start: u64, end: u64) -> Self {
        let span = end.saturating_sub(start).max(48);
        Clock {
            t: start,
            end: start + span,
            step: (span / 24).max(2),
        }
    }

    fn next(&mut self, rng: &mut Rng) -> u64 {
        let d = self.step / 2 + rng.below(self.step);
        let nt = (self.t + d).min(self.end.saturating_sub(1));
        self.t = nt.max(self.t + 1);
        self.t
    }
}

fn push_json(buf: &mut Vec<u8>, n: &mut usize, v: &Value) {
    if *n > 0 {
        buf.push(b',');
    }
    *n += 1;
    serde_json::to_writer(&mut *buf, v).expect("serialising a JSON value into memory cannot fail");
}

/// JS-style number: integers without a fraction.
fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

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

struct Gen<'a> {
    p: &'a TaskPlan,
    all: &'a [TaskPlan],
    ws: &'a Workspace,
    st: Style,
    model: &'static Model,
    rng: Rng,
    ui: Vec<u8>,
    ui_n: usize,
    api: Vec<u8>,
    api_n: usize,
    trunc_at: Option<usize>,
    ctx_tokens: u64,
    sums: [u64; 4],
    cost: f64,
    files: Vec<Value>,
    todos: Vec<(String, &'static str)>,
    tabs: Vec<String>,
    pending: Vec<UBlock>,
    pending_env: bool,
    first_turn: bool,
    turns_left: u64,
    call_seq: u32,
    last_newtask_call: String,
    followups: u32,
    env_len: usize,
}

impl<'a> Gen<'a> {
    fn new(p: &'a TaskPlan, all: &'a [TaskPlan], ws: &'a Workspace) -> Self {
        let st = style(p.era, p.start_ts);
        let total_turns: u64 =
            p.seg_turns.iter().map(|t| u64::from(*t)).sum::<u64>() + p.kids.len() as u64 + 1;
        let todos = if st.todos && p.parent.is_some() {
            p.todos.iter().map(|t| (t.clone(), "pending")).collect()
        } else {
            Vec::new()
        };
        let cap = (p.budget as usize / 2).clamp(4096, 8 << 20);
        Gen {
            p,
            all,
            ws,
            st,
            model: &MODELS[p.model],
            rng: Rng::new(p.seed),
            ui: Vec::with_capacity(cap + cap / 2),
            ui_n: 0,
            api: Vec::with_capacity(cap),
            api_n: 0,
            trunc_at: None,
            ctx_tokens: 0,
            sums: [0; 4],
            cost: 0.0,
            files: Vec::new(),
            todos,
            tabs: Vec::new(),
            pending: Vec::new(),
            pending_env: true,
            first_turn: true,
            turns_left: total_turns.max(1),
            call_seq: 0,
            last_newtask_call: String::new(),
            followups: 0,
            env_len: 1_100,
        }
    }

    fn slots(&self) -> Slots<'a> {
        Slots { ws: self.ws }
    }

    fn lang(&self) -> Lang {
        self.p.lang
    }

    fn written(&self) -> u64 {
        (self.ui.len() + self.api.len()) as u64
    }

    fn push_ui(&mut self, v: &Value) {
        push_json(&mut self.ui, &mut self.ui_n, v);
    }

    fn push_api(&mut self, v: &Value) {
        push_json(&mut self.api, &mut self.api_n, v);
    }

    fn say(
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

    fn ask(
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

    fn abs_path(&self, rel: &str) -> String {
        if self.ws.native.contains('\\') {
            format!("{}\\{}", self.ws.native, rel.replace('/', "\\"))
        } else {
            format!("{}/{}", self.ws.native, rel)
        }
    }

    fn touch(&mut self, path: &str) {
        self.tabs.retain(|t| t != path);
        self.tabs.push(path.to_string());
        if self.tabs.len() > 14 {
            self.tabs.remove(0);
        }
    }

    fn track_file(&mut self, path: &str, ts: u64, edited: bool) {
        if !self.st.metadata {
            return;
        }
        for f in self.files.iter_mut() {
            if f["path"] == path && f["record_state"] == "active" {
                f["record_state"] = "stale".into();
            }
        }
        self.files.push(json!({
            "path": path,
            "record_state": "active",
            "record_source": if edited { "roo_edited" } else { "read_tool" },
            "roo_read_date": ts,
            "roo_edit_date": if edited { Value::from(ts) } else { Value::Null },
            "user_edit_date": Value::Null,
        }));
    }

    fn call_id(&mut self) -> String {
        self.call_seq += 1;
        if self.model.anthropic {
            format!("toolu_01{}", self.rng.base62(22))
        } else {
            format!("call_{}", self.rng.base62(24))
        }
    }

    fn env_details(&mut self, ts: u64) -> String {
        let st = self.st;
        let mut s = String::with_capacity(1024);
        s.push_str("# VSCode Visible Files\n");
        s.push_str(
            self.tabs
                .last()
                .map_or("(No visible files)", |t| t.as_str()),
        );
        s.push_str("\n\n# VSCode Open Tabs\n");
        if self.tabs.is_empty() {
            s.push_str("(No open tabs)");
        } else {
            s.push_str(&self.tabs.join(if st.tabs_comma { "," } else { "\n" }));
        }
        s.push('\n');
        if st.env_extras && self.rng.chance(0.3) {
            let n = self.rng.between(3, 30);
            let (cmd, out) = text::dev_server(self.ws, &mut self.rng, n);
            let _ = write!(
                s,
                "\n# Actively Running Terminals\n## Terminal 2 (Active)\n### Working Directory: `{}`\n### Original command: `{cmd}`\n### New Output\n{out}",
                self.ws.posix
            );
        }
        if st.env_extras && self.rng.chance(0.1) && !self.tabs.is_empty() {
            let _ = write!(s, "\n# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\n{}\n", self.tabs[0]);
        }
        if st.env_extras {
            let z = self.ws.zone;
            if st.time_iso {
                let _ = write!(s, "\n# Current Time\nCurrent time in ISO 8601 UTC format: {}\nUser time zone: {}, {}\n", iso(ts), z.name, z.utc_label(ts));
            } else {
                let _ = write!(
                    s,
                    "\n# Current Time\n{} ({}, {})\n",
                    z.local_us(ts),
                    z.name,
                    z.utc_label(ts)
                );
            }
            let _ = write!(s, "\n# Current Cost\n${:.2}\n", self.cost);
            let _ = write!(
                s,
                "\n# Current Mode\n<slug>{}</slug>\n<name>{}</name>\n<model>{}</model>\n",
                self.p.mode.slug(),
                self.p.mode.name(),
                self.model.id
            );
        }
        if self.first_turn {
            let _ = write!(
                s,
                "\n\n# Current {} Directory ({}) Files\n{}\n",
                if st.working_header {
                    "Working"
                } else {
                    "Workspace"
                },
                self.ws.posix,
                self.ws.files.join("\n")
            );
        }
        let mut out = String::with_capacity(s.len() + 512);
        out.push_str("<environment_details>\n");
        out.push_str(s.trim());
        if st.todos {
            out.push('\n');
            if self.todos.is_empty() {
                out.push_str("You have not created a todo list yet. Create one with `update_todo_list` if your task is complicated or involves multiple steps.");
            } else {
                out.push_str("====\n\nREMINDERS\n\nBelow is your current list of reminders for this task. Keep them updated as you progress.\n\n| # | Content | Status |\n|---|---------|--------|\n");
                for (i, (c, status)) in self.todos.iter().enumerate() {
                    let label = match *status {
                        "completed" => "Completed",
                        "in_progress" => "In Progress",
                        _ => "Pending",
                    };
                    let _ = writeln!(out, "| {} | {} | {} |", i + 1, c, label);
                }
                out.push_str("\n\nIMPORTANT: When task status changes, remember to call the `update_todo_list` tool to update your progress.\n");
            }
        }
        out.push_str("\n</environment_details>");
        out
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
    fn begin(&mut self, clock: &mut Clock) -> (Option<String>, usize) {
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

    fn api_req(
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

    fn reasoning_text(&mut self) -> Option<String> {
        let reasoning_model = !matches!(self.p.model, 0 | 1);
        let p = if reasoning_model {
            0.6
        } else if self.st.xml {
            0.35
        } else {
            0.0
        };
        if !self.rng.chance(p) {
            return None;
        }
        let n = self.rng.between(1, 5);
        let slots = self.slots();
        Some(text::reasoning(self.lang(), &slots, &mut self.rng, n))
    }

    /// Writes the assistant message to the API history.
    fn emit_assistant(
        &mut self,
        ts: u64,
        reasoning: Option<&str>,
        prose: Option<&str>,
        call: &Call,
    ) {
        let st = self.st;
        let inline_thinking = st.xml && matches!(self.p.model, 0 | 1);
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

    fn checkpoint(&mut self, ts: u64) {
        let (from, to) = (self.rng.hex(40), self.rng.hex(40));
        let cp = match self.st.checkpoint {
            1 => json!({"isFirst": self.rng.chance(0.1), "from": from, "to": to}),
            2 => json!({"from": from, "to": to, "suppressMessage": false}),
            _ => return,
        };
        self.say(ts, "checkpoint_saved", Some(to), None, Some(cp));
    }

    fn todos_value(&self) -> Value {
        Value::Array(
            self.todos
                .iter()
                .map(|(c, s)| json!({"id": md5_hex(format!("{c}{s}").as_bytes()), "content": c, "status": s}))
                .collect(),
        )
    }

    /// One ordinary turn: read, edit, command, search, list, question or todo update.
    fn filler_turn(&mut self, start: u64, end: u64) {
        let mut clock = Clock::new(start, end);
        let allowance = self.p.budget.saturating_sub(self.written()) / self.turns_left.max(1);
        self.turns_left = self.turns_left.saturating_sub(1);
        let (request, in_bytes) = self.begin(&mut clock);
        let mult = if self.st.request { 2.1 } else { 1.1 };
        let mut payload = ((allowance as f64 - 900.0 - self.env_len as f64 * mult) / mult)
            .clamp(120.0, 3_000_000.0) as usize;
        let lang = self.lang();
        let slots = self.slots();
        let reasoning = self.reasoning_text();
        let long = payload > 3_000 && self.rng.chance(0.12);
        let prose = if long {
            let n = payload / 3;
            payload -= n;
            text::markdown(lang, &slots, &mut self.rng, n)
        } else {
            let n = self.rng.between(1, 3);
            text::prose(lang, &slots, &mut self.rng, n)
        };
        let weights: [u32; 8] = if payload > 6_000 {
            [40, 10, 3, 30, 10, 2, 0, 5]
        } else {
            [30, 14, 5, 18, 7, 3, 3, 6]
        };
        let mut action = self.rng.weighted(&weights);
        if (action == 6 && self.followups >= 2) || (action == 7 && !self.st.todos) {
            action = 0;
        }
        let native = !self.st.xml;
        let id = self.call_id();
        let (call, ui_tool, desc, body): (Call, UiTool, String, String) = match action {
            0 => {
                let path = self.ws.source(&mut self.rng);
                let code = text::code(self.ws, &mut self.rng, payload * 87 / 100);
                let numbered = text::numbered(&code, native);
                let lines = numbered.lines().count();
                let body = if native {
                    format!("File: {path}\nLines 1-{lines}:\n{numbered}")
                } else {
                    numbered
                };
                let json = if self.st.say_tool_readonly || !self.st.protected {
                    json!({"tool": "readFile", "path": path, "content": self.abs_path(&path)})
                } else {
                    json!({"tool": "readFile", "path": path, "isOutsideWorkspace": false, "content": self.abs_path(&path)})
                };
                let call = Call {
                    id,
                    name: "read_file",
                    input: json!({"path": path}),
                };
                (
                    call,
                    UiTool::Tool { json, edit: false },
                    format!("read_file for '{path}'"),
                    body,
                )
            }
            1 => {
                let path = self.ws.source(&mut self.rng);
                let diff = text::diff(self.ws, &mut self.rng, (payload / 85).max(3));
                let json = if self.st.say_tool_readonly {
                    json!({"tool": "editedExistingFile", "path": path, "diff": diff})
                } else if self.st.protected {
                    json!({"tool": "appliedDiff", "path": path, "diff": diff, "isProtected": false})
                } else {
                    json!({"tool": "appliedDiff", "path": path, "diff": diff})
                };
                let name = if self.st.say_tool_readonly {
                    "write_to_file"
                } else {
                    "apply_diff"
                };
                let call = Call {
                    id,
                    name,
                    input: json!({"path": path, "diff": diff}),
                };
                let body = format!("Changes successfully applied to {path}.");
                (
                    call,
                    UiTool::Tool { json, edit: true },
                    format!("{name} for '{path}'"),
                    body,
                )
            }
            2 => {
                let path = self.ws.source(&mut self.rng).replace('.', "_new.");
                let content = text::code(self.ws, &mut self.rng, payload * 9 / 10);
                let lines = content.lines().count();
                let json = if self.st.protected {
                    json!({"tool": "newFileCreated", "path": path, "content": content, "isOutsideWorkspace": false, "isProtected": false})
                } else {
                    json!({"tool": "newFileCreated", "path": path, "content": content})
                };
                let call = Call {
                    id,
                    name: "write_to_file",
                    input: json!({"path": path, "content": content, "line_count": lines}),
                };
                let body = format!("The content was successfully saved to {path}.");
                (
                    call,
                    UiTool::Tool { json, edit: true },
                    format!("write_to_file for '{path}'"),
                    body,
                )
            }
            3 => {
                let cmd = self.ws.test_cmd().to_string();
                let fail = self.rng.chance(0.3);
                let output = text::command_output(self.ws, &mut self.rng, payload * 7 / 10, fail);
                let body = format!(
                    "Command executed in terminal 1 within working directory '{}'. Exit code: {}\nOutput:\n{}",
                    self.ws.posix,
                    u8::from(fail),
                    output
                );
                let call = Call {
                    id,
                    name: "execute_command",
                    input: json!({"command": cmd}),
                };
                (
                    call,
                    UiTool::Command {
                        cmd: cmd.clone(),
                        output,
                    },
                    format!("execute_command for '{cmd}'"),
                    body,
                )
            }
            4 => {
                let regex = format!("{}\\(", self.ws.func(&mut self.rng));
                let pattern = format!(
                    "*.{}",
                    self.ws.sources[0].rsplit('.').next().unwrap_or("txt")
                );
                let results = text::search_results(self.ws, &mut self.rng, payload * 7 / 10);
                let json = if self.st.protected {
                    json!({"tool": "searchFiles", "path": ".", "regex": regex, "filePattern": pattern, "isOutsideWorkspace": false, "content": results})
                } else {
                    json!({"tool": "searchFiles", "path": ".", "regex": regex, "filePattern": pattern, "content": results})
                };
                let call = Call {
                    id,
                    name: "search_files",
                    input: json!({"path": ".", "regex": regex, "file_pattern": pattern}),
                };
                (
                    call,
                    UiTool::Tool { json, edit: false },
                    format!("search_files for '{regex}' in '{pattern}'"),
                    results,
                )
            }
            5 => {
                let listing = self.ws.files.join("\n");
                let json = if self.st.protected {
                    json!({"tool": "listFilesRecursive", "path": ".", "isOutsideWorkspace": false, "content": listing})
                } else {
                    json!({"tool": "listFilesRecursive", "path": ".", "content": listing})
                };
                let call = Call {
                    id,
                    name: "list_files",
                    input: json!({"path": ".", "recursive": true}),
                };
                (
                    call,
                    UiTool::Tool { json, edit: false },
                    "list_files for '.'".to_string(),
                    listing,
                )
            }
            6 => {
                self.followups += 1;
                let (q, suggest) = text::question(lang, &slots, &mut self.rng);
                let answer = suggest[self.rng.below(suggest.len() as u64) as usize].clone();
                let follow: Vec<Value> = suggest.iter().map(|s| json!({"text": s})).collect();
                let call = Call {
                    id,
                    name: "ask_followup_question",
                    input: json!({"question": q, "follow_up": follow}),
                };
                let body = if native {
                    format!("<user_message>\n{answer}\n</user_message>")
                } else {
                    format!("<answer>\n{answer}\n</answer>")
                };
                let desc = format!("ask_followup_question for '{q}'");
                (
                    call,
                    UiTool::Followup {
                        question: q,
                        suggest,
                        answer,
                    },
                    desc,
                    body,
                )
            }
            _ => {
                if self.todos.is_empty() {
                    let items = text::todos(lang, &slots, &mut self.rng);
                    self.todos = items.into_iter().map(|c| (c, "pending")).collect();
                } else if let Some(t) = self.todos.iter_mut().find(|t| t.1 != "completed") {
                    t.1 = if t.1 == "pending" {
                        "in_progress"
                    } else {
                        "completed"
                    };
                }
                let md: Vec<String> = self
                    .todos
                    .iter()
                    .map(|(c, s)| {
                        format!(
                            "[{}] {c}",
                            match *s {
                                "completed" => "x",
                                "in_progress" => "-",
                                _ => " ",
                            }
                        )
                    })
                    .collect();
                let json = json!({"tool": "updateTodoList", "todos": self.todos_value()});
                let call = Call {
                    id,
                    name: "update_todo_list",
                    input: json!({"todos": md.join("\n")}),
                };
                (
                    call,
                    UiTool::Tool { json, edit: false },
                    "update_todo_list".to_string(),
                    "Todo list updated successfully.".to_string(),
                )
            }
        };
        let out_bytes = prose.len()
            + reasoning.as_ref().map_or(0, |r| r.len())
            + call.input.to_string().len() / 2;
        self.api_req(&mut clock, request, in_bytes, out_bytes);
        let inline_thinking = self.st.xml && matches!(self.p.model, 0 | 1);
        if let (false, Some(r)) = (inline_thinking, reasoning.as_ref()) {
            let ts = clock.next(&mut self.rng);
            self.say(ts, "reasoning", Some(r.clone()), Some(false), None);
        }
        let ts = clock.next(&mut self.rng);
        self.say(ts, "text", Some(prose.clone()), Some(false), None);
        let tool_ts = clock.next(&mut self.rng);
        let mut after = tool_ts;
        match ui_tool {
            UiTool::Tool { json, edit } => {
                let path = json.get("path").and_then(Value::as_str).map(str::to_string);
                let text = json.to_string();
                if self.st.say_tool_readonly && !edit {
                    self.say(tool_ts, "tool", Some(text), None, None);
                } else {
                    self.ask(tool_ts, "tool", text, Some(false), edit, edit);
                }
                if let Some(path) = path.filter(|p| p != ".") {
                    self.touch(&path);
                    self.track_file(&path, tool_ts, edit);
                }
                if edit && self.st.checkpoint > 0 {
                    after = clock.next(&mut self.rng);
                    self.checkpoint(after);
                }
            }
            UiTool::Command { cmd, output } => {
                self.ask(tool_ts, "command", cmd, Some(false), false, false);
                let chunks = self.rng.between(1, 3);
                let step = output.len() / chunks + 1;
                let mut rest = output.as_str();
                while !rest.is_empty() {
                    let mut cut = step.min(rest.len());
                    while !rest.is_char_boundary(cut) {
                        cut += 1;
                    }
                    let (a, b) = rest.split_at(cut);
                    after = clock.next(&mut self.rng);
                    self.say(after, "command_output", Some(a.to_string()), None, None);
                    rest = b;
                }
            }
            UiTool::Followup {
                question,
                suggest,
                answer,
            } => {
                let text = if self.p.era == Era::ClaudeDev2024 {
                    question
                } else {
                    let s: Vec<Value> = suggest.iter().map(|a| json!({"answer": a})).collect();
                    json!({"question": question, "suggest": s}).to_string()
                };
                self.ask(tool_ts, "followup", text, Some(false), false, true);
                after = clock.next(&mut self.rng);
                self.say(after, "user_feedback", Some(answer), None, None);
            }
        }
        self.emit_assistant(tool_ts + 7, reasoning.as_deref(), Some(&prose), &call);
        let _ = after;
        self.pending.push(UBlock::Result {
            id: call.id,
            name: call.name,
            desc,
            body,
        });
    }

    fn newtask_turn(&mut self, start: u64, ev: &ChildEvent, first_child: bool) {
        let mut clock = Clock::new(start, ev.newtask_ts.saturating_sub(1));
        self.turns_left = self.turns_left.saturating_sub(1);
        let (request, in_bytes) = self.begin(&mut clock);
        let child = &self.all[ev.child];
        let lang = self.lang();
        let reasoning = self.reasoning_text();
        let prose = match lang {
            Lang::Fr => format!(
                "Je confie cette partie au mode {} avec des consignes précises.",
                child.mode.name()
            ),
            Lang::En => format!(
                "I'll delegate this part to {} mode with precise instructions.",
                child.mode.name()
            ),
        };
        let id = self.call_id();
        let mut input = Map::new();
        input.insert("mode".into(), child.mode.slug().into());
        input.insert("message".into(), child.raw_content.clone().into());
        let mut ui = Map::new();
        ui.insert("tool".into(), "newTask".into());
        ui.insert("mode".into(), child.mode.name().into());
        ui.insert("content".into(), child.raw_content.clone().into());
        if self.st.delegation {
            let md: Vec<String> = child.todos.iter().map(|t| format!("- [ ] {t}")).collect();
            input.insert("todos".into(), md.join("\n").into());
            let todos: Vec<Value> = child
                .todos
                .iter()
                .map(|t| json!({"id": md5_hex(format!("{t}pending").as_bytes()), "content": t, "status": "pending"}))
                .collect();
            ui.insert("todos".into(), Value::Array(todos));
        }
        let call = Call {
            id,
            name: "new_task",
            input: Value::Object(input),
        };
        let out_bytes =
            prose.len() + child.raw_content.len() + reasoning.as_ref().map_or(0, |r| r.len());
        self.api_req(&mut clock, request, in_bytes, out_bytes);
        let inline_thinking = self.st.xml && matches!(self.p.model, 0 | 1);
        if let (false, Some(r)) = (inline_thinking, reasoning.as_ref()) {
            let ts = clock.next(&mut self.rng);
            self.say(ts, "reasoning", Some(r.clone()), Some(false), None);
        }
        let ts = clock.next(&mut self.rng);
        self.say(ts, "text", Some(prose.clone()), Some(false), None);
        self.ask(
            ev.newtask_ts,
            "tool",
            Value::Object(ui).to_string(),
            Some(false),
            true,
            true,
        );
        if first_child && self.p.ui_truncated {
            self.trunc_at = Some(self.ui.len());
        }
        self.emit_assistant(ev.newtask_ts + 7, reasoning.as_deref(), Some(&prose), &call);
        if self.st.xml {
            let name = child.mode.name();
            let raw = &child.raw_content;
            self.pending.push(UBlock::Result {
                id: call.id.clone(),
                name: "new_task",
                desc: format!("new_task in {name} mode: '{raw}'"),
                body: format!("Successfully created new task in {name} mode with message: {raw}"),
            });
        }
        self.last_newtask_call = call.id;
    }

    fn child_done(&mut self, ev: &ChildEvent) {
        let child = &self.all[ev.child];
        let result = child.result.clone();
        if self.st.delegation {
            let v =
                json!({"type": "say", "say": "subtask_result", "text": result, "ts": ev.result_ts});
            self.push_ui(&v);
            self.pending.push(UBlock::Result {
                id: self.last_newtask_call.clone(),
                name: "new_task",
                desc: String::new(),
                body: format!("Subtask {} completed.\n\nResult:\n{}", child.id, result),
            });
            self.pending_env = false;
        } else {
            let kind = if self.st.subtask_as_text {
                "text"
            } else {
                "subtask_result"
            };
            self.say(ev.result_ts, kind, Some(result.clone()), None, None);
            let ts = ev.result_ts + 1 + self.rng.below(100);
            self.push_api(&json!({"role": "user", "content": [{"type": "text", "text": format!("[new_task completed] Result: {result}")}], "ts": ts}));
        }
    }

    fn completion_turn(&mut self, start: u64) {
        let end = self.p.end_ts;
        let mut clock = Clock::new(start, end.saturating_sub(30));
        let (request, in_bytes) = self.begin(&mut clock);
        let reasoning = self.reasoning_text();
        let result = self.p.result.clone();
        let id = self.call_id();
        let call = Call {
            id,
            name: "attempt_completion",
            input: json!({"result": result}),
        };
        self.api_req(&mut clock, request, in_bytes, result.len() + 200);
        let inline_thinking = self.st.xml && matches!(self.p.model, 0 | 1);
        if let (false, Some(r)) = (inline_thinking, reasoning.as_ref()) {
            let ts = clock.next(&mut self.rng);
            self.say(ts, "reasoning", Some(r.clone()), Some(false), None);
        }
        self.say(
            end - 15,
            "completion_result",
            Some(result),
            Some(false),
            None,
        );
        self.emit_assistant(end - 10, reasoning.as_deref(), None, &call);
        self.ask(end, "completion_result", String::new(), None, false, false);
    }

    fn run(&mut self) {
        let p = self.p;
        self.push_ui(
            &json!({"ts": p.start_ts, "type": "say", "say": "text", "text": p.instruction}),
        );
        let tag = self.st.user_tag;
        self.pending.push(UBlock::Text(format!(
            "<{tag}>\n{}\n</{tag}>",
            p.instruction
        )));
        let mut last = p.start_ts + 1;
        for (i, seg) in p.segments.iter().enumerate() {
            if seg.turns > 0 {
                let slot = (seg.t1 - seg.t0) / u64::from(seg.turns);
                for k in 0..u64::from(seg.turns) {
                    let s = seg.t0 + k * slot;
                    self.filler_turn(s, s + slot);
                }
            }
            last = seg.t1;
            if let Some(ev) = p.children.get(i) {
                self.newtask_turn(seg.t1, ev, i == 0);
                self.child_done(ev);
                last = ev.result_ts + 100;
            }
        }
        let start = p.segments.last().map_or(last, |s| s.t1.max(last));
        self.completion_turn(start);
    }

    fn finish(mut self, dir: &Path, strip_links: bool) -> io::Result<Rendered> {
        let p = self.p;
        fs::create_dir_all(dir)?;
        let mut ui = std::mem::take(&mut self.ui);
        let mut bytes = 0u64;
        let ui_file = if p.era == Era::ClaudeDev2024 && p.start_ts < ms(2024, 10, 6) {
            "claude_messages.json"
        } else {
            "ui_messages.json"
        };
        let mut framed = Vec::with_capacity(ui.len() + 2);
        framed.push(b'[');
        match self.trunc_at {
            Some(n) if p.ui_truncated => {
                ui.truncate(n);
                framed.extend_from_slice(&ui);
            }
            _ => {
                framed.extend_from_slice(&ui);
                framed.push(b']');
            }
        }
        drop(ui);
        fs::write(dir.join(ui_file), &framed)?;
        bytes += framed.len() as u64;
        drop(framed);
        let api = std::mem::take(&mut self.api);
        let mut framed = Vec::with_capacity(api.len() + 32);
        if self.st.v2 {
            framed.extend_from_slice(br#"{"version":2,"messages":["#);
            framed.extend_from_slice(&api);
            framed.extend_from_slice(b"]}");
        } else {
            framed.push(b'[');
            framed.extend_from_slice(&api);
            framed.push(b']');
        }
        drop(api);
        fs::write(dir.join("api_conversation_history.json"), &framed)?;
        bytes += framed.len() as u64;
        drop(framed);
        if self.st.metadata {
            let meta = json!({"files_in_context": std::mem::take(&mut self.files)}).to_string();
            fs::write(dir.join("task_metadata.json"), &meta)?;
            bytes += meta.len() as u64;
        }
        let history_item = if self.st.history {
            let mut m = Map::new();
            m.insert("id".into(), p.id.clone().into());
            if let (Some(parent), false) = (p.parent, strip_links) {
                m.insert("parentTaskId".into(), self.all[parent].id.clone().into());
            }
            m.insert("number".into(), 1.into());
            m.insert("ts".into(), p.end_ts.into());
            m.insert("task".into(), p.instruction.trim().into());
            m.insert("tokensIn".into(), self.sums[0].into());
            m.insert("tokensOut".into(), self.sums[1].into());
            m.insert("cacheWrites".into(), self.sums[2].into());
            m.insert("cacheReads".into(), self.sums[3].into());
            m.insert("totalCost".into(), num(self.cost));
            m.insert("size".into(), bytes.into());
            m.insert("workspace".into(), self.ws.native.clone().into());
            m.insert("mode".into(), p.mode.slug().into());
            m.insert("apiConfigName".into(), self.model.profile.into());
            m.insert(
                "status".into(),
                if p.parent.is_some() {
                    "completed"
                } else {
                    "active"
                }
                .into(),
            );
            if let Some(&last) = p.kids.last() {
                if !strip_links {
                    m.insert("delegatedToId".into(), self.all[last].id.clone().into());
                    let ids: Vec<Value> = p
                        .kids
                        .iter()
                        .map(|&k| Value::from(self.all[k].id.clone()))
                        .collect();
                    m.insert("childIds".into(), Value::Array(ids));
                    m.insert(
                        "completedByChildId".into(),
                        self.all[last].id.clone().into(),
                    );
                }
                m.insert(
                    "completionResultSummary".into(),
                    self.all[last].result.clone().into(),
                );
            }
            let v = Value::Object(m);
            let s = v.to_string();
            fs::write(dir.join("history_item.json"), &s)?;
            bytes += s.len() as u64;
            Some(v)
        } else {
            None
        };
        Ok(Rendered {
            history_item,
            bytes,
        })
    }
}

/// Renders task `p` into `tasks_dir/<id>/`.
pub fn render(
    tasks_dir: &Path,
    p: &TaskPlan,
    all: &[TaskPlan],
    ws: &[Workspace],
    strip_links: bool,
) -> io::Result<Rendered> {
    let mut g = Gen::new(p, all, &ws[p.ws]);
    for _ in 0..g.rng.below(3) {
        let f = g.ws.source(&mut g.rng);
        g.touch(&f);
    }
    g.run();
    g.finish(&tasks_dir.join(&p.id), strip_links)
}
