//! Hand-built skeletons and an in-memory generator of task trees with known truth and traps, shared by
//! the hierarchy tests (`#[path]` module) and the hierarchy bench. Also compiled alone as an (empty)
//! test target.
#![allow(dead_code)]

use roo_formats::extract::{ChildSource, NewTaskInstruction};
use roo_state::skeleton::{ApiTotalsOut, DatesFrom, SkeletonMetadata, StoredLinks, TaskFiles};
use roo_state::ConversationSkeleton;
use std::collections::BTreeMap;

/// A skeleton with only what the hierarchy reads.
pub fn skel(
    id: &str,
    workspace: Option<&str>,
    created: Option<i64>,
    instruction: &str,
) -> ConversationSkeleton {
    ConversationSkeleton {
        task_id: id.to_owned(),
        parent_task_id: None,
        sequence: None,
        metadata: SkeletonMetadata {
            title: Some(instruction.chars().take(40).collect()),
            created_at: roo_js::iso_from_ms(created.unwrap_or(0)),
            last_activity: roo_js::iso_from_ms(created.unwrap_or(0)),
            mode: Some("code".into()),
            message_count: 0,
            action_count: 0,
            total_size: 0,
            workspace: workspace.map(str::to_owned),
            data_source: format!("/tasks/{id}"),
            source: "roo".into(),
            dates_from: DatesFrom::UiMessages,
        },
        child_task_instruction_prefixes: Vec::new(),
        is_completed: false,
        truncated_instruction: None,
        instruction: (!instruction.is_empty()).then(|| instruction.to_owned()),
        child_tasks: Vec::new(),
        stored_links: StoredLinks::default(),
        parent_evidence: None,
        root_task_id: None,
        api_totals: ApiTotalsOut::default(),
        files: TaskFiles::default(),
        created_at_ms: created,
        last_activity_ms: created,
        diagnostics: Vec::new(),
    }
}

/// A `newTask` call seen in the UI.
pub fn call(message: &str, ts: Option<i64>, completed: Option<i64>) -> NewTaskInstruction {
    NewTaskInstruction {
        ts,
        mode: Some("code".into()),
        message: message.to_owned(),
        todos: None,
        sources: vec![ChildSource::UiAsk, ChildSource::ToolUse],
        child_task_id: None,
        completed_ts: completed,
    }
}

/// Give `s` calls and move its last activity to the latest time seen.
pub fn with_calls(
    mut s: ConversationSkeleton,
    calls: Vec<NewTaskInstruction>,
) -> ConversationSkeleton {
    for c in &calls {
        for t in [c.ts, c.completed_ts].into_iter().flatten() {
            s.last_activity_ms = Some(s.last_activity_ms.map_or(t, |l| l.max(t)));
        }
    }
    s.child_tasks = calls;
    s
}

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() % 1_000_000) as f64 / 1_000_000.0 < p
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next_u64() % v.len() as u64) as usize]
    }
}

const WORDS: [&str; 64] = [
    "refactor",
    "parser",
    "module",
    "tests",
    "config",
    "schema",
    "export",
    "import",
    "cache",
    "index",
    "query",
    "vector",
    "search",
    "token",
    "budget",
    "report",
    "deploy",
    "server",
    "client",
    "router",
    "handler",
    "build",
    "docs",
    "readme",
    "lint",
    "format",
    "bench",
    "trace",
    "metric",
    "log",
    "error",
    "retry",
    "timeout",
    "stream",
    "buffer",
    "window",
    "layout",
    "style",
    "theme",
    "button",
    "dialog",
    "form",
    "field",
    "table",
    "column",
    "migration",
    "database",
    "backup",
    "restore",
    "secret",
    "policy",
    "role",
    "user",
    "session",
    "cookie",
    "header",
    "payload",
    "upload",
    "download",
    "archive",
    "diff",
    "patch",
    "merge",
    "branch",
];

/// Generated trees: skeletons (in a scrambled order) with stored links, the true parent of every task,
/// and the trap each task exercises.
pub struct Generated {
    pub skeletons: Vec<ConversationSkeleton>,
    pub truth: BTreeMap<String, Option<String>>,
    pub trap: BTreeMap<String, &'static str>,
}

struct Builder {
    rng: Rng,
    next_id: u64,
    skeletons: Vec<ConversationSkeleton>,
    truth: BTreeMap<String, Option<String>>,
    trap: BTreeMap<String, &'static str>,
    workspaces: Vec<[String; 3]>,
}

/// A preamble longer than 192 characters, shared by the `long_shared` instructions.
pub const PREAMBLE: &str = "Context: you are working in the orchestrator workflow of this repository. Read the \
project conventions first, keep every change small and reviewed, run the whole test suite before finishing, \
report what you changed and why, then continue with the specific assignment: ";

impl Builder {
    fn id(&mut self) -> String {
        self.next_id += 1;
        // Ids whose order is unrelated to creation order.
        let h = Rng::new(self.next_id).next_u64();
        format!(
            "{:08x}-{:04x}-7{:03x}-8{:03x}-{:012x}",
            (h >> 32) as u32,
            (h >> 16) as u16,
            self.next_id & 0xfff,
            (h >> 4) & 0xfff,
            self.next_id
        )
    }

    fn sentence(&mut self, words: usize) -> String {
        let mut out = String::new();
        for i in 0..words {
            if i > 0 {
                out.push(' ');
            }
            let w: &&str = self.rng.pick(&WORDS);
            out.push_str(w);
        }
        out
    }

    fn instruction(&mut self) -> String {
        let n = self.rng.range(6, 30) as usize;
        let s = self.sentence(n);
        format!("Please {s} (step {})", self.rng.range(1, 99))
    }

    fn spelling(&mut self, ws: usize) -> String {
        let k = self.rng.range(0, 2) as usize;
        self.workspaces[ws][k].clone()
    }

    /// A task and, recursively, its children. Returns the time the task finished.
    #[expect(clippy::too_many_arguments)]
    fn task(
        &mut self,
        id: String,
        parent: Option<String>,
        ws: usize,
        created: i64,
        instruction: String,
        depth: u32,
        budget: &mut usize,
    ) -> i64 {
        *budget = budget.saturating_sub(1);
        let spelled = self.spelling(ws);
        let mut s = skel(&id, Some(&spelled), Some(created), &instruction);
        s.stored_links.history_item_parent = parent.clone();
        self.truth.insert(id.clone(), parent);
        let mut now = created + self.rng.range(2_000, 60_000);
        let mut calls = Vec::new();
        let kids = self.child_count(depth, *budget);
        let mut previous: Option<String> = None;
        let mut kid_ids: Vec<String> = Vec::new();
        for _ in 0..kids {
            if *budget == 0 {
                break;
            }
            let child = self.id();
            let planned = self.child_instruction(previous.as_deref());
            previous = Some(planned.message.clone());
            let call_ts = now + self.rng.range(1_000, 30_000);
            let child_created = call_ts + self.rng.range(200, 3_000);
            let mut c = call(&planned.message, Some(call_ts), None);
            let era = self.rng.range(0, 99);
            let trap = self.record_era(era, &mut c, child_created, planned.trap);
            self.trap.insert(child.clone(), trap);
            let end = self.task(
                child.clone(),
                Some(id.clone()),
                ws,
                child_created,
                planned.child_text.clone(),
                depth + 1,
                budget,
            );
            let completed = end + self.rng.range(100, 2_000);
            c.completed_ts = c.ts.map(|_| completed);
            if era >= 12 && self.rng.chance(0.3) {
                c.child_task_id = Some(child.clone());
            }
            calls.push(c);
            kid_ids.push(child.clone());
            now = completed;
            if self.rng.chance(0.04) && *budget > 2 {
                self.lookalike_pair(ws, child_created, &planned);
                *budget = budget.saturating_sub(2);
            }
        }
        self.finish_parent(s, calls, &kid_ids, now)
    }

    /// How many children a task at `depth` gets: up to three above depth 4, at least one for a root.
    fn child_count(&mut self, depth: u32, budget: usize) -> i64 {
        let mut kids = if depth < 4 && budget > 0 {
            self.rng.range(0, 3)
        } else {
            0
        };
        if depth == 0 && budget > 0 {
            kids = kids.max(1);
        }
        kids
    }

    /// A child's instruction, with the trap it sets: the same as its previous sibling's, a long shared
    /// preamble, escaping the normalisation must undo, a parent record cut short, or plain.
    fn child_instruction(&mut self, previous: Option<&str>) -> PlannedChild {
        let roll = self.rng.range(0, 99);
        let (trap, message, child_text): (&'static str, String, String) = match roll {
            0..=5 if previous.is_some() => {
                let p = previous.unwrap_or_default().to_owned();
                ("siblings_same", p.clone(), p)
            }
            6..=11 => {
                let tail = self.sentence(5);
                let t = format!("{PREAMBLE}{tail}");
                ("long_shared", t.clone(), t)
            }
            12..=17 => {
                let w = self.sentence(8);
                (
                    "escaping",
                    format!("Fix  \\\\@src/{w}.ts &amp; check &lt;div&gt;\n\n  then   {w} AGAIN"),
                    format!("fix \\@src/{w}.ts & check <div> then {w} again"),
                )
            }
            18..=21 => {
                let t = self.instruction();
                let extra = self.sentence(12);
                let full = format!("{t} and then {extra}");
                // The parent's record holds only the first part (a cut header), the child all of it.
                ("prefix_record", format!("{t}..."), full)
            }
            _ => {
                let t = self.instruction();
                ("plain", t.clone(), t)
            }
        };
        PlannedChild {
            trap,
            message,
            child_text,
        }
    }

    /// How the parent recorded the call, by the `era` roll: below 8 only in the API history, written
    /// after the child started; below 12 without a time; else as seen in the UI. Returns the child's
    /// trap (the era's own name when the instruction set none).
    fn record_era(
        &mut self,
        era: i64,
        c: &mut NewTaskInstruction,
        child_created: i64,
        trap: &'static str,
    ) -> &'static str {
        if era < 8 {
            c.sources = vec![ChildSource::ToolUse];
            c.ts = Some(child_created + self.rng.range(0, 4_000));
            if trap == "plain" {
                "api_only"
            } else {
                trap
            }
        } else if era < 12 {
            c.ts = None;
            if trap == "plain" {
                "untimed"
            } else {
                trap
            }
        } else {
            trap
        }
    }

    /// A look-alike root created after the child born at `child_created`, issuing the same
    /// instruction, with its own child.
    fn lookalike_pair(&mut self, ws: usize, child_created: i64, planned: &PlannedChild) {
        let la = self.id();
        let la_created = child_created + self.rng.range(60_000, 600_000);
        let la_text = self.instruction();
        let la_child = self.id();
        let la_call = la_created + self.rng.range(5_000, 20_000);
        let la_child_created = la_call + self.rng.range(200, 2_000);
        let mut l = skel(&la, Some(&self.spelling(ws)), Some(la_created), &la_text);
        l = with_calls(
            l,
            vec![call(
                &planned.message,
                Some(la_call),
                Some(la_child_created + 30_000),
            )],
        );
        self.truth.insert(la.clone(), None);
        self.trap.insert(la.clone(), "lookalike_root");
        let mut lc = skel(
            &la_child,
            Some(&self.spelling(ws)),
            Some(la_child_created),
            &planned.child_text,
        );
        lc.last_activity_ms = Some(la_child_created + 20_000);
        lc.stored_links.history_item_parent = Some(la.clone());
        self.truth.insert(la_child.clone(), Some(la.clone()));
        self.trap.insert(la_child.clone(), "lookalike_child");
        self.skeletons.push(l);
        self.skeletons.push(lc);
    }

    /// Gives the parent `s` its calls and child ids, ends it after `now`, sometimes cuts its files
    /// right after its last call, and stores it. Returns the time it finished.
    fn finish_parent(
        &mut self,
        s: ConversationSkeleton,
        calls: Vec<NewTaskInstruction>,
        kid_ids: &[String],
        now: i64,
    ) -> i64 {
        let mut s = with_calls(s, calls);
        s.stored_links.child_ids = s
            .child_tasks
            .iter()
            .filter_map(|c| c.child_task_id.clone())
            .collect();
        let end = s.last_activity_ms.unwrap_or(now).max(now) + self.rng.range(1_000, 10_000);
        s.last_activity_ms = Some(end);
        // The parent's files cut right after its last call.
        if !s.child_tasks.is_empty() && self.rng.chance(0.05) {
            if let Some(last) = s.child_tasks.last_mut() {
                last.completed_ts = None;
                s.last_activity_ms = last.ts.or(s.last_activity_ms);
                if let Some(k) = kid_ids.last() {
                    self.trap.insert(k.clone(), "truncated_parent");
                }
            }
        }
        self.skeletons.push(s);
        end
    }
}

/// A child's instruction as its parent's call records it and as the child holds it, and the trap
/// it sets.
struct PlannedChild {
    trap: &'static str,
    message: String,
    child_text: String,
}

/// About `n` tasks in trees of depth ≤ 4 over `n / 40` workspaces (each spelled three ways), with every
/// trap; a copy of some trees in another workspace at almost the same times; some parents deleted.
pub fn generate(n: usize, seed: u64) -> Generated {
    let mut b = Builder {
        rng: Rng::new(seed),
        next_id: seed.wrapping_mul(1_000_000),
        skeletons: Vec::new(),
        truth: BTreeMap::new(),
        trap: BTreeMap::new(),
        workspaces: Vec::new(),
    };
    for w in 0..(n / 40).max(3) {
        b.workspaces.push([
            format!("D:\\dev\\project-{w}"),
            format!("d:/Dev/Project-{w}/"),
            format!("/d:/dev/project-{w}"),
        ]);
    }
    let mut budget = n;
    let mut t: i64 = 1_700_000_000_000;
    while budget > 0 {
        let ws = b.rng.range(0, b.workspaces.len() as i64 - 1) as usize;
        let root = b.id();
        let text = b.instruction();
        let before = b.skeletons.len();
        let end = b.task(root.clone(), None, ws, t, text, 0, &mut budget);
        b.trap.entry(root).or_insert("root");
        // Twin tree in another workspace, a few hundred ms apart: same texts, other ids.
        if b.rng.chance(0.08) && budget > 10 {
            let other = (ws + 1) % b.workspaces.len();
            let offset = b.rng.range(100, 900);
            let copies: Vec<ConversationSkeleton> = b.skeletons[before..].to_vec();
            let mut map: BTreeMap<String, String> = BTreeMap::new();
            for s in &copies {
                let id = b.id();
                map.insert(s.task_id.clone(), id);
            }
            for mut s in copies {
                let old = s.task_id.clone();
                s.task_id = map[&old].clone();
                s.metadata.workspace = Some(b.spelling(other));
                s.created_at_ms = s.created_at_ms.map(|x| x + offset);
                s.last_activity_ms = s.last_activity_ms.map(|x| x + offset);
                for c in &mut s.child_tasks {
                    c.ts = c.ts.map(|x| x + offset);
                    c.completed_ts = c.completed_ts.map(|x| x + offset);
                    c.child_task_id = c.child_task_id.as_ref().map(|x| map[x].clone());
                }
                s.stored_links.child_ids = s
                    .stored_links
                    .child_ids
                    .iter()
                    .map(|x| map[x].clone())
                    .collect();
                let parent = b.truth[&old].as_ref().map(|p| map[p].clone());
                s.stored_links.history_item_parent = parent.clone();
                b.truth.insert(s.task_id.clone(), parent);
                b.trap.insert(s.task_id.clone(), "twin_workspace");
                budget = budget.saturating_sub(1);
                b.skeletons.push(s);
            }
        }
        t = end + b.rng.range(1_000, 3_600_000);
    }
    // Deleted parents: drop some tasks that have children (their children keep the stored link).
    let mut parents: Vec<String> = b.truth.values().flatten().cloned().collect();
    parents.sort();
    parents.dedup();
    let mut gone: Vec<String> = Vec::new();
    for p in parents {
        if b.rng.chance(0.02) {
            gone.push(p);
        }
    }
    b.skeletons.retain(|s| !gone.contains(&s.task_id));
    for g in &gone {
        b.truth.remove(g);
        for (c, p) in &b.truth {
            if p.as_deref() == Some(g.as_str()) {
                b.trap.insert(c.clone(), "deleted_parent");
            }
        }
    }
    // Scramble the order.
    let len = b.skeletons.len();
    for i in (1..len).rev() {
        let j = (b.rng.next_u64() % (i as u64 + 1)) as usize;
        b.skeletons.swap(i, j);
    }
    Generated {
        skeletons: b.skeletons,
        truth: b.truth,
        trap: b.trap,
    }
}

/// Remove every stored link (history_item, childIds, task_metadata, delegation ids).
pub fn strip_links(skeletons: &mut [ConversationSkeleton]) {
    for s in skeletons {
        s.stored_links = StoredLinks::default();
        s.parent_task_id = None;
        s.root_task_id = None;
        for c in &mut s.child_tasks {
            c.child_task_id = None;
        }
    }
}

/// Precision and recall of `result` against `truth` (links whose parent is among the skeletons).
pub struct Score {
    pub predicted: usize,
    pub correct: usize,
    pub expected: usize,
    pub wrong: Vec<(String, Option<String>, Option<String>)>,
    pub missed: Vec<String>,
}

impl Score {
    pub fn precision(&self) -> f64 {
        if self.predicted == 0 {
            1.0
        } else {
            self.correct as f64 / self.predicted as f64
        }
    }
    pub fn recall(&self) -> f64 {
        if self.expected == 0 {
            1.0
        } else {
            self.correct as f64 / self.expected as f64
        }
    }
}

pub fn score(result: &[ConversationSkeleton], truth: &BTreeMap<String, Option<String>>) -> Score {
    let present: std::collections::HashSet<&str> =
        result.iter().map(|s| s.task_id.as_str()).collect();
    let mut sc = Score {
        predicted: 0,
        correct: 0,
        expected: 0,
        wrong: Vec::new(),
        missed: Vec::new(),
    };
    for s in result {
        let want = truth.get(&s.task_id).cloned().flatten();
        let want_here = want.as_deref().filter(|p| present.contains(p));
        if want_here.is_some() {
            sc.expected += 1;
        }
        if let Some(got) = s.parent_task_id.as_deref().filter(|p| present.contains(p)) {
            sc.predicted += 1;
            if Some(got) == want_here {
                sc.correct += 1;
            } else {
                sc.wrong
                    .push((s.task_id.clone(), want.clone(), Some(got.to_owned())));
            }
        } else if want_here.is_some() {
            sc.missed.push(s.task_id.clone());
        }
    }
    sc
}
