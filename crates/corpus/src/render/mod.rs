//! Rendering phase: turns one planned task into its files, in the shape of its era.
//!
//! A task is a sequence of turns ([`turns`]): ordinary tool calls ([`tools`]) between the `newTask`s of its
//! children, then the completion. Each turn writes to the UI and API message streams ([`messages`]) with the
//! editor's state in its environment details ([`editor`]), switched by era ([`style`]); [`folder`] writes
//! the files at the end.

mod editor;
mod folder;
mod messages;
mod style;
mod tools;
mod turns;

use std::io;
use std::path::Path;

use serde_json::{json, Value};

use crate::plan::{Model, TaskPlan, MODELS};
use crate::rng::Rng;
use crate::text::{Lang, Slots, Workspace};
use messages::UBlock;
use style::{style, Style};

/// What rendering one task produced.
pub struct Rendered {
    pub history_item: Option<Value>,
    pub bytes: u64,
}

/// Times within one turn: strictly increasing, spread over the turn's span and never reaching its end.
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

/// JS-style number: integers without a fraction.
fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

/// The state of one task while it is rendered: the plan, the era's switches, the two message streams
/// being written, token and cost totals, and the editor's state.
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

    /// Renders every turn: the first message, the ordinary turns of each segment with the `newTask` and
    /// the child's result after it, then the completion.
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
