//! Planning phase (sequential, cheap): task forest, eras, workspaces, instructions, traps, byte budgets,
//! timelines and ids. Rendering (parallel) only reads the plan.

mod models;
mod timeline;
mod traps;

use std::collections::HashSet;

pub use models::{Model, MODELS};

use crate::rng::Rng;
use crate::text::{self, Lang, Slots, Workspace};
use crate::time::ms;
use crate::{CorpusSpec, Era};
use models::model_for;

/// Built-in modes: (slug, display name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Orchestrator,
    Code,
    Architect,
    Ask,
    Debug,
}

impl Mode {
    pub fn slug(self) -> &'static str {
        match self {
            Mode::Orchestrator => "orchestrator",
            Mode::Code => "code",
            Mode::Architect => "architect",
            Mode::Ask => "ask",
            Mode::Debug => "debug",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Orchestrator => "🪃 Orchestrator",
            Mode::Code => "💻 Code",
            Mode::Architect => "🏗️ Architect",
            Mode::Ask => "❓ Ask",
            Mode::Debug => "🪲 Debug",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ChildEvent {
    pub child: usize,
    pub newtask_ts: u64,
    pub result_ts: u64,
}

#[derive(Clone, Debug)]
pub struct Segment {
    pub t0: u64,
    pub t1: u64,
    pub turns: u32,
}

#[derive(Clone, Copy, Debug)]
enum Anchor {
    /// Root starts after the given child has finished (decoy parent).
    AfterChild(usize),
    /// Root issues its newTask right after the given child's newTask (same instruction, other workspace).
    NearNewTask(usize),
}

#[derive(Clone, Debug)]
pub struct TaskPlan {
    pub id: String,
    pub era: Era,
    pub ws: usize,
    pub lang: Lang,
    pub mode: Mode,
    pub parent: Option<usize>,
    pub kids: Vec<usize>,
    /// The parent's `newTask` content (raw, before un-escaping); empty for roots.
    pub raw_content: String,
    /// The task's first `say:"text"`.
    pub instruction: String,
    pub result: String,
    pub todos: Vec<String>,
    pub children: Vec<ChildEvent>,
    pub segments: Vec<Segment>,
    pub start_ts: u64,
    pub end_ts: u64,
    pub budget: u64,
    pub seg_turns: Vec<u32>,
    pub slot_ms: u64,
    pub traps: Vec<String>,
    pub deleted: bool,
    pub ui_truncated: bool,
    pub model: usize,
    pub seed: u64,
    anchor: Option<Anchor>,
}

impl Era {
    pub(crate) fn has_subtasks(self) -> bool {
        !matches!(self, Era::ClaudeDev2024)
    }

    fn window(self) -> (u64, u64) {
        match self {
            Era::ClaudeDev2024 => (ms(2024, 8, 1), ms(2024, 10, 31)),
            Era::StackXmlOld => (ms(2025, 1, 20), ms(2025, 4, 5)),
            Era::StackXml => (ms(2025, 4, 7), ms(2025, 8, 15)),
            Era::Native => (ms(2026, 1, 5), ms(2026, 2, 28)),
            Era::HistoryItem => (ms(2026, 3, 1), ms(2026, 4, 25)),
            Era::V2Wrapper => (ms(2026, 4, 28), ms(2026, 6, 15)),
        }
    }

    fn uuid_v7(self) -> bool {
        matches!(self, Era::Native | Era::HistoryItem | Era::V2Wrapper)
    }
}

struct Planner<'a> {
    spec: &'a CorpusSpec,
    rng: Rng,
    ws: Vec<Workspace>,
    tasks: Vec<TaskPlan>,
    seen: HashSet<String>,
    era_count: Vec<usize>,
    eras: Vec<Era>,
}

/// Normalised 192-char key, like the legacy prefix index (lower-case, collapsed whitespace).
pub fn prefix_key(s: &str) -> String {
    let lower = s.to_lowercase();
    let collapsed = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.chars().take(192).collect()
}

impl Planner<'_> {
    fn push(&mut self, era: Era, ws: usize, mode: Mode, parent: Option<usize>) -> usize {
        let lang = match parent {
            Some(p) => self.tasks[p].lang,
            None if self.rng.chance(0.8) => self.ws[ws].lang,
            None if self.ws[ws].lang == Lang::En => Lang::Fr,
            None => Lang::En,
        };
        let model = model_for(era, &mut self.rng);
        let seed = self.rng.next_u64();
        let idx = self.tasks.len();
        self.tasks.push(TaskPlan {
            id: String::new(),
            era,
            ws,
            lang,
            mode,
            parent,
            kids: Vec::new(),
            raw_content: String::new(),
            instruction: String::new(),
            result: String::new(),
            todos: Vec::new(),
            children: Vec::new(),
            segments: Vec::new(),
            start_ts: 0,
            end_ts: 0,
            budget: 0,
            seg_turns: Vec::new(),
            slot_ms: 0,
            traps: Vec::new(),
            deleted: false,
            ui_truncated: false,
            model,
            seed,
            anchor: None,
        });
        if let Some(p) = parent {
            self.tasks[p].kids.push(idx);
        }
        idx
    }

    fn on_disk(&self) -> usize {
        self.tasks.iter().filter(|t| !t.deleted).count()
    }

    /// Task folders that may still be added without exceeding the requested count.
    fn room(&self) -> usize {
        self.spec.tasks.saturating_sub(self.on_disk())
    }

    /// Era with the lowest task count relative to its weight (eras may repeat in the spec to weight them).
    fn next_era(&mut self, need_subtasks: bool) -> Option<Era> {
        let mut best: Option<(f64, usize)> = None;
        for (i, e) in self.eras.iter().enumerate() {
            if need_subtasks && !e.has_subtasks() {
                continue;
            }
            let weight = self.spec.eras.iter().filter(|x| *x == e).count().max(1) as f64;
            let score = self.era_count[i] as f64 / weight;
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, i));
            }
        }
        best.map(|(_, i)| self.eras[i])
    }

    fn count_era(&mut self, era: Era, n: usize) {
        if let Some(i) = self.eras.iter().position(|e| *e == era) {
            self.era_count[i] += n;
        }
    }

    fn child_mode(&mut self) -> Mode {
        self.rng.pick(&[
            Mode::Code,
            Mode::Code,
            Mode::Code,
            Mode::Code,
            Mode::Debug,
            Mode::Architect,
            Mode::Ask,
        ])
    }

    fn root_mode(&mut self, era: Era, has_kids: bool) -> Mode {
        if has_kids {
            match era {
                Era::StackXmlOld => self.rng.pick(&[Mode::Architect, Mode::Code]),
                Era::StackXml => {
                    self.rng
                        .pick(&[Mode::Orchestrator, Mode::Orchestrator, Mode::Architect])
                }
                _ => Mode::Orchestrator,
            }
        } else {
            self.rng.pick(&[
                Mode::Code,
                Mode::Code,
                Mode::Ask,
                Mode::Debug,
                Mode::Architect,
            ])
        }
    }

    /// Adds a tree of at most `room` tasks; returns its size.
    fn add_tree(&mut self, room: usize) -> usize {
        let tree = room >= 2 && self.rng.chance(0.3);
        let Some(era) = self.next_era(false) else {
            return 0;
        };
        let era = if tree && !era.has_subtasks() {
            self.next_era(true).unwrap_or(era)
        } else {
            era
        };
        let tree = tree && era.has_subtasks();
        let ws = self.rng.below(self.ws.len() as u64) as usize;
        if !tree {
            let mode = self.root_mode(era, false);
            self.push(era, ws, mode, None);
            self.count_era(era, 1);
            return 1;
        }
        let mode = self.root_mode(era, true);
        let root = self.push(era, ws, mode, None);
        let mut used = 1;
        let nkids = self.rng.between(1, 6).min(room - used);
        for _ in 0..nkids {
            if used >= room {
                break;
            }
            let m = self.child_mode();
            let c = self.push(era, ws, m, Some(root));
            used += 1;
            if used < room && self.rng.chance(0.2) {
                let ng = self.rng.between(1, 3).min(room - used);
                for _ in 0..ng {
                    let m = self.child_mode();
                    self.push(era, ws, m, Some(c));
                    used += 1;
                }
            }
        }
        self.count_era(era, used);
        used
    }

    fn unique_text(&mut self, idx: usize) -> String {
        let t = &self.tasks[idx];
        let (lang, ws, root, orch) = (t.lang, t.ws, t.parent.is_none(), !t.kids.is_empty());
        let slots = Slots { ws: &self.ws[ws] };
        for attempt in 0..64 {
            let mut s = if root {
                text::root_instruction(lang, &slots, &mut self.rng, orch)
            } else {
                text::child_instruction(lang, &slots, &mut self.rng)
            };
            if attempt > 8 {
                s = format!("[{}] {s}", self.rng.hex(6));
            }
            if self.seen.insert(prefix_key(&s)) {
                return s;
            }
        }
        format!(
            "[{}] {}",
            self.rng.hex(12),
            text::child_instruction(lang, &slots, &mut self.rng)
        )
    }

    fn texts(&mut self, from: usize) {
        for i in from..self.tasks.len() {
            let s = self.unique_text(i);
            let t = &self.tasks[i];
            let slots = Slots { ws: &self.ws[t.ws] };
            let result = text::result_text(t.lang, &slots, &mut self.rng);
            let todos = text::todos(t.lang, &slots, &mut self.rng);
            let t = &mut self.tasks[i];
            t.raw_content = if t.parent.is_some() {
                s.clone()
            } else {
                String::new()
            };
            t.instruction = s;
            t.result = result;
            t.todos = todos;
        }
    }
}

/// Plans the whole corpus.
pub fn plan(spec: &CorpusSpec) -> (Vec<Workspace>, Vec<TaskPlan>) {
    let mut rng = Rng::derive(spec.seed, u64::MAX);
    let ws = text::make_workspaces(spec.workspaces, &mut rng);
    let mut eras: Vec<Era> = Vec::new();
    for e in if spec.eras.is_empty() {
        Era::ALL.to_vec()
    } else {
        spec.eras.clone()
    } {
        if !eras.contains(&e) {
            eras.push(e);
        }
    }
    let era_count = vec![0; eras.len()];
    let mut p = Planner {
        spec,
        rng,
        ws,
        tasks: Vec::new(),
        seen: HashSet::new(),
        era_count,
        eras,
    };
    let hier = p.eras.iter().any(|e| e.has_subtasks());
    let k = if spec.traps && hier {
        (spec.tasks / 150).max(1)
    } else {
        0
    };
    let reserved = (k * 7).min(spec.tasks / 3);
    let base = spec.tasks.saturating_sub(reserved);
    while p.on_disk() < base {
        let room = base - p.on_disk();
        if p.add_tree(room) == 0 {
            break;
        }
    }
    p.texts(0);
    if k > 0 {
        p.apply_traps(k);
    }
    // Traps that did not fit are skipped; top up with ordinary trees.
    while p.on_disk() < spec.tasks {
        let from = p.tasks.len();
        if p.add_tree(spec.tasks - p.on_disk()) == 0 {
            break;
        }
        p.texts(from);
    }
    p.budgets();
    p.layout_all();
    p.ids();
    (p.ws, p.tasks)
}
