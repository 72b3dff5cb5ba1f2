//! Planning phase (sequential, cheap): task forest, eras, workspaces, instructions, traps, byte budgets,
//! timelines and ids. Rendering (parallel) only reads the plan.

use std::collections::HashSet;

use crate::rng::Rng;
use crate::text::{self, Lang, Slots, Workspace};
use crate::time::ms;
use crate::{CorpusSpec, Era};

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

/// How the child's text was derived from the parent's raw `newTask` content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Escaped,
    Whitespace,
    Html,
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

/// The models a task of an era may use: (id, anthropic protocol, USD per Mtok in/out/cache write/cache read,
/// provider profile name).
pub struct Model {
    pub id: &'static str,
    pub anthropic: bool,
    pub prices: [f64; 4],
    pub profile: &'static str,
}

pub const MODELS: &[Model] = &[
    Model {
        id: "claude-3-5-sonnet-20240620",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic",
    },
    Model {
        id: "claude-3-5-sonnet-20241022",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic",
    },
    Model {
        id: "claude-3-7-sonnet-20250219",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic-sonnet",
    },
    Model {
        id: "claude-sonnet-4-20250514",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic-sonnet",
    },
    Model {
        id: "google/gemini-2.5-pro",
        anthropic: false,
        prices: [1.25, 10.0, 0.0, 0.31],
        profile: "openrouter",
    },
    Model {
        id: "claude-sonnet-4-5",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic-sonnet",
    },
    Model {
        id: "gpt-5.4",
        anthropic: false,
        prices: [1.25, 10.0, 0.0, 0.125],
        profile: "openai-gpt5",
    },
    Model {
        id: "qwen3:32b",
        anthropic: false,
        prices: [0.0, 0.0, 0.0, 0.0],
        profile: "local-qwen",
    },
];

fn model_for(era: Era, rng: &mut Rng) -> usize {
    match era {
        Era::ClaudeDev2024 => 0,
        Era::StackXmlOld => rng.pick(&[1, 2, 2]),
        Era::StackXml => rng.pick(&[2, 3, 3, 4]),
        Era::Native | Era::HistoryItem | Era::V2Wrapper => rng.pick(&[5, 5, 6, 7]),
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

    fn label(&mut self, idx: usize, trap: &str) {
        let t = &mut self.tasks[idx];
        if !t.traps.iter().any(|x| x == trap) {
            t.traps.push(trap.to_string());
        }
    }

    fn children_on_disk(&self) -> Vec<usize> {
        self.tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.parent.is_some() && !t.deleted)
            .map(|(i, _)| i)
            .collect()
    }

    fn free(&self, i: usize) -> bool {
        self.tasks[i].traps.is_empty()
    }

    fn pick_free(&mut self, cands: &[usize]) -> Option<usize> {
        let free: Vec<usize> = cands.iter().copied().filter(|&i| self.free(i)).collect();
        if free.is_empty() {
            None
        } else {
            Some(self.rng.pick(&free))
        }
    }

    fn set_child_text(&mut self, idx: usize, raw: String, text: String) {
        let t = &mut self.tasks[idx];
        t.raw_content = raw;
        t.instruction = text;
    }

    fn apply_traps(&mut self, k: usize) {
        let n_ws = self.ws.len();
        for _ in 0..k {
            // 1. identical siblings
            let parents: Vec<usize> = (0..self.tasks.len())
                .filter(|&i| {
                    self.tasks[i].kids.len() >= 2 && !self.tasks[i].deleted && self.free(i)
                })
                .collect();
            if let Some(p) = self.pick_free(&parents) {
                let kids = self.tasks[p].kids.clone();
                let (a, b) = (kids[0], kids[1]);
                let (raw, text) = (
                    self.tasks[a].raw_content.clone(),
                    self.tasks[a].instruction.clone(),
                );
                self.set_child_text(b, raw, text);
                for i in [p, a, b] {
                    self.label(i, "identical_siblings");
                }
            }
            // 2. shared 192-char prefix: a long common context paragraph, then distinct tasks (siblings when
            //    possible, as an orchestrator does)
            let sib: Vec<usize> = (0..self.tasks.len())
                .filter(|&i| {
                    !self.tasks[i].deleted
                        && self.tasks[i].kids.iter().filter(|&&c| self.free(c)).count() >= 2
                })
                .collect();
            let pair = if let Some(p) = self.pick_free(&sib).or_else(|| sib.first().copied()) {
                let free: Vec<usize> = self.tasks[p]
                    .kids
                    .iter()
                    .copied()
                    .filter(|&c| self.free(c))
                    .collect();
                Some((free[0], free[1]))
            } else {
                let kids = self.children_on_disk();
                let a = self.pick_free(&kids);
                let b = a.and_then(|a| {
                    let others: Vec<usize> = kids.iter().copied().filter(|&x| x != a).collect();
                    self.pick_free(&others)
                });
                a.zip(b)
            };
            if let Some((a, b)) = pair {
                let t = &self.tasks[a];
                let ws = &self.ws[t.ws];
                let slots = Slots { ws };
                let lang = t.lang;
                let n = self.rng.range(100, 99_999);
                let mut pre = match lang {
                    Lang::Fr => format!("Contexte commun pour {} (#{n}) : ", ws.name),
                    Lang::En => format!("Shared context for {} (#{n}): ", ws.name),
                };
                while pre.chars().count() < 240 {
                    pre.push_str(&text::prose(lang, &slots, &mut self.rng, 1));
                    pre.push(' ');
                }
                pre.push_str(if lang == Lang::Fr {
                    "\n\nTa sous-tâche : "
                } else {
                    "\n\nYour subtask: "
                });
                for x in [a, b] {
                    let tail = text::child_instruction(
                        lang,
                        &Slots {
                            ws: &self.ws[self.tasks[x].ws],
                        },
                        &mut self.rng,
                    );
                    let s = format!("{pre}{tail}");
                    self.set_child_text(x, s.clone(), s);
                    self.label(x, "shared_prefix_192");
                }
            }
            // 3–5. text variants between the parent's newTask content and the child's first message
            for (variant, label) in [
                (Variant::Escaped, "escaped_mention"),
                (Variant::Whitespace, "whitespace_variant"),
                (Variant::Html, "html_entity_variant"),
            ] {
                let kids = self.children_on_disk();
                if let Some(c) = self.pick_free(&kids) {
                    let base = self.tasks[c].instruction.clone();
                    let (raw, text) = variant_pair(&base, variant, &mut self.rng);
                    self.set_child_text(c, raw, text);
                    self.label(c, label);
                }
            }
            // 6. deleted parent
            let room = self.room();
            if let (Some(era), true) = (self.next_era(true), room >= 1) {
                let ws = self.rng.below(n_ws as u64) as usize;
                let p = self.push(era, ws, Mode::Orchestrator, None);
                self.tasks[p].deleted = true;
                let from = p;
                let nk = self.rng.between(1, 2).min(room);
                for _ in 0..nk {
                    let m = self.child_mode();
                    self.push(era, ws, m, Some(p));
                }
                self.count_era(era, nk);
                self.texts(from);
                for c in self.tasks[p].kids.clone() {
                    self.label(c, "parent_deleted");
                }
            }
            // 7. parent whose ui_messages.json is truncated right after its first newTask
            let parents: Vec<usize> = (0..self.tasks.len())
                .filter(|&i| {
                    !self.tasks[i].kids.is_empty() && !self.tasks[i].deleted && self.free(i)
                })
                .collect();
            if let Some(p) = self.pick_free(&parents) {
                self.tasks[p].ui_truncated = true;
                self.label(p, "ui_truncated");
                for c in self.tasks[p].kids.clone() {
                    self.label(c, "parent_ui_truncated");
                }
            }
            // 8. decoy parent: same instruction issued after the real child was created
            let kids = self.children_on_disk();
            let kids: Vec<usize> = kids
                .into_iter()
                .filter(|&c| self.tasks[c].parent.is_some_and(|p| !self.tasks[p].deleted))
                .collect();
            if let (Some(c1), true) = (self.pick_free(&kids), self.room() >= 2) {
                let (era, ws) = (self.tasks[c1].era, self.tasks[c1].ws);
                let p1 = self.tasks[c1].parent.unwrap_or(0);
                let p2 = self.push(era, ws, Mode::Orchestrator, None);
                let m = self.tasks[c1].mode;
                let c2 = self.push(era, ws, m, Some(p2));
                self.count_era(era, 2);
                self.texts(p2);
                if self.tasks[p1].parent.is_none() {
                    // A look-alike: the user re-issued the same request (only for root parents, so that the
                    // decoy does not also look like a sibling of the real parent).
                    let p_text = self.tasks[p1].instruction.clone();
                    self.tasks[p2].instruction = p_text;
                }
                let (raw, text) = (
                    self.tasks[c1].raw_content.clone(),
                    self.tasks[c1].instruction.clone(),
                );
                self.set_child_text(c2, raw, text);
                self.tasks[p2].anchor = Some(Anchor::AfterChild(c1));
                for i in [c1, p2, c2] {
                    self.label(i, "decoy_parent_after_child");
                }
            }
            // 9. same instruction in two workspaces, at about the same time
            if n_ws >= 2 && self.room() >= 2 {
                let kids = self.children_on_disk();
                let kids: Vec<usize> = kids
                    .into_iter()
                    .filter(|&c| self.tasks[c].parent.is_some_and(|p| !self.tasks[p].deleted))
                    .collect();
                if let Some(c1) = self.pick_free(&kids) {
                    let era = self.tasks[c1].era;
                    let ws =
                        (self.tasks[c1].ws + 1 + self.rng.below(n_ws as u64 - 1) as usize) % n_ws;
                    let p2 = self.push(era, ws, Mode::Orchestrator, None);
                    let m = self.tasks[c1].mode;
                    let c2 = self.push(era, ws, m, Some(p2));
                    self.count_era(era, 2);
                    self.texts(p2);
                    let (raw, text) = (
                        self.tasks[c1].raw_content.clone(),
                        self.tasks[c1].instruction.clone(),
                    );
                    self.set_child_text(c2, raw, text);
                    self.tasks[p2].anchor = Some(Anchor::NearNewTask(c1));
                    for i in [c1, c2] {
                        self.label(i, "same_instruction_two_workspaces");
                    }
                }
            }
        }
    }

    fn budgets(&mut self) {
        for i in 0..self.tasks.len() {
            let big = self.rng.chance(0.18);
            let b = if big {
                self.rng.range(500_000, 1_500_000) as f64
            } else {
                self.rng.log_uniform(1_000.0, 22_000.0)
            };
            self.tasks[i].budget = b as u64;
        }
        if let Some(target) = self.spec.target_bytes {
            // Rendering adds a roughly constant overhead per task on top of its budget (first message,
            // environment details with the file listing, completion): measured ≈6 KB.
            const OVERHEAD: f64 = 6_000.0;
            let budgets: Vec<f64> = self
                .tasks
                .iter()
                .filter(|t| !t.deleted)
                .map(|t| t.budget as f64)
                .collect();
            let sum: f64 = budgets.iter().sum();
            let hi = ((target as f64 - OVERHEAD * budgets.len() as f64) / sum.max(1.0)).max(0.0);
            for t in &mut self.tasks {
                t.budget = (t.budget as f64 * hi) as u64;
            }
        }
        for i in 0..self.tasks.len() {
            let b = self.tasks[i].budget;
            let per_turn = if b > 200_000 {
                self.rng.range(6_000, 14_000)
            } else {
                self.rng.range(2_500, 6_000)
            };
            let nk = self.tasks[i].kids.len();
            let filler = ((b / per_turn) as usize)
                .clamp(1, 400)
                .saturating_sub(nk + 1)
                .max(usize::from(nk == 0));
            let mut weights: Vec<u64> = (0..=nk).map(|_| self.rng.range(1, 10)).collect();
            if nk > 0 {
                weights[0] += 3;
            }
            let total: u64 = weights.iter().sum();
            let mut seg: Vec<u32> = weights
                .iter()
                .map(|w| (filler as u64 * w / total) as u32)
                .collect();
            let assigned: u32 = seg.iter().sum();
            if let Some(last) = seg.last_mut() {
                *last += filler as u32 - assigned;
            }
            if matches!(self.tasks[i].anchor, Some(Anchor::NearNewTask(_))) {
                let moved = seg[0];
                seg[0] = 0;
                if let Some(last) = seg.last_mut() {
                    *last += moved;
                }
            }
            self.tasks[i].seg_turns = seg;
            self.tasks[i].slot_ms = self.rng.range(6_000, 40_000);
        }
    }

    fn layout(&mut self, idx: usize, start: u64) -> u64 {
        let slot = self.tasks[idx].slot_ms;
        let seg_turns = self.tasks[idx].seg_turns.clone();
        let kids = self.tasks[idx].kids.clone();
        let mut t = start + self.rng.range(150, 400);
        let mut segments = Vec::with_capacity(seg_turns.len());
        let mut events = Vec::with_capacity(kids.len());
        for (i, turns) in seg_turns.iter().enumerate() {
            let t0 = t;
            let t1 = t0 + u64::from(*turns) * slot;
            segments.push(Segment {
                t0,
                t1,
                turns: *turns,
            });
            t = t1;
            if let Some(&c) = kids.get(i) {
                let newtask_ts = t1 + self.rng.range(8_000, 25_000);
                let child_start = newtask_ts + self.rng.range(300, 2_500);
                let child_end = self.layout(c, child_start);
                let result_ts = child_end + self.rng.range(150, 900);
                events.push(ChildEvent {
                    child: c,
                    newtask_ts,
                    result_ts,
                });
                t = result_ts + self.rng.range(200, 600);
            }
        }
        let end = t + self.rng.range(6_000, 20_000);
        let task = &mut self.tasks[idx];
        task.start_ts = start;
        task.end_ts = end;
        task.segments = segments;
        task.children = events;
        end
    }

    fn layout_all(&mut self) {
        let roots: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| self.tasks[i].parent.is_none())
            .collect();
        for &r in &roots {
            if self.tasks[r].anchor.is_some() {
                continue;
            }
            let (w0, w1) = self.tasks[r].era.window();
            let start = self
                .rng
                .range(w0, w1.saturating_sub(6 * 3_600_000).max(w0 + 1));
            self.layout(r, start);
        }
        for &r in roots.iter() {
            match self.tasks[r].anchor {
                None => {}
                Some(Anchor::AfterChild(c1)) => {
                    let p1 = self.tasks[c1].parent.unwrap_or(c1);
                    let done = self.tasks[p1]
                        .children
                        .iter()
                        .find(|e| e.child == c1)
                        .map_or(self.tasks[c1].end_ts, |e| e.result_ts);
                    let start = done + self.rng.range(60_000, 3_600_000);
                    self.layout(r, start);
                }
                Some(Anchor::NearNewTask(c1)) => {
                    let p1 = self.tasks[c1].parent.unwrap_or(c1);
                    let nt = self.tasks[p1]
                        .children
                        .iter()
                        .find(|e| e.child == c1)
                        .map_or(self.tasks[c1].start_ts, |e| e.newtask_ts);
                    // segment 0 has no turns: the newTask comes 8–25 s after the start.
                    let start = nt.saturating_sub(self.rng.range(2_000, 6_000));
                    self.layout(r, start);
                }
            }
        }
    }

    fn ids(&mut self) {
        for i in 0..self.tasks.len() {
            let (era, ts) = (self.tasks[i].era, self.tasks[i].start_ts);
            self.tasks[i].id = if era.uuid_v7() {
                self.rng.uuid_v7(ts)
            } else {
                self.rng.uuid_v4()
            };
        }
    }
}

/// Builds the (raw parent content, child text) pair for a text-variant trap.
fn variant_pair(base: &str, variant: Variant, rng: &mut Rng) -> (String, String) {
    match variant {
        Variant::Escaped => {
            let raw = format!(
                "{base}\n\nLook at \\\\@/src/{}.ts and \\\\@problems before changing anything.",
                rng.hex(4)
            );
            let text = raw.replace("\\\\@", "\\@");
            (raw, text)
        }
        Variant::Whitespace => {
            let text = format!("{base}\n\nThen run the checks again.");
            let mut raw = text.replace(". ", ".  ").replace('\n', " \n");
            raw.push_str("\n\n");
            if raw == text {
                raw.push(' ');
            }
            (raw, text)
        }
        Variant::Html => {
            let text = format!("{base}\n\nUse `make lint && make test` and keep Result<Vec<Item>, Error> as the return type.");
            let raw = text
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            (raw, text)
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
