//! Traps: tasks whose text, folders or timing mislead a naive hierarchy reconstruction, each labelled in the
//! truth (the labels are listed in the crate documentation).

use super::{Anchor, Mode, Planner};
use crate::rng::Rng;
use crate::text::{self, Lang, Slots};

/// How the child's text was derived from the parent's raw `newTask` content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Escaped,
    Whitespace,
    Html,
}

impl Planner<'_> {
    /// Adds `k` rounds of traps; in each round every trap is tried once, in a fixed order, and skipped when
    /// the forest offers no free task for it.
    pub(super) fn apply_traps(&mut self, k: usize) {
        for _ in 0..k {
            self.trap_identical_siblings();
            self.trap_shared_prefix();
            for (variant, label) in [
                (Variant::Escaped, "escaped_mention"),
                (Variant::Whitespace, "whitespace_variant"),
                (Variant::Html, "html_entity_variant"),
            ] {
                self.trap_text_variant(variant, label);
            }
            self.trap_deleted_parent();
            self.trap_truncated_parent_ui();
            self.trap_decoy_parent();
            self.trap_same_instruction_two_workspaces();
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

    /// Children on disk whose parent is on disk too.
    fn children_of_present_parents(&self) -> Vec<usize> {
        self.children_on_disk()
            .into_iter()
            .filter(|&c| self.tasks[c].parent.is_some_and(|p| !self.tasks[p].deleted))
            .collect()
    }

    /// A task no trap has used yet.
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

    /// Gives `to` the same `newTask` content and first message as `from`.
    fn copy_child_text(&mut self, from: usize, to: usize) {
        let (raw, text) = (
            self.tasks[from].raw_content.clone(),
            self.tasks[from].instruction.clone(),
        );
        self.set_child_text(to, raw, text);
    }

    /// `identical_siblings`: the second child of a parent gets the first child's text.
    fn trap_identical_siblings(&mut self) {
        let parents: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| self.tasks[i].kids.len() >= 2 && !self.tasks[i].deleted && self.free(i))
            .collect();
        if let Some(p) = self.pick_free(&parents) {
            let kids = self.tasks[p].kids.clone();
            let (a, b) = (kids[0], kids[1]);
            self.copy_child_text(a, b);
            for i in [p, a, b] {
                self.label(i, "identical_siblings");
            }
        }
    }

    /// Two free children for `shared_prefix_192`: siblings when possible (as an orchestrator writes them),
    /// otherwise any two children on disk.
    fn shared_prefix_pair(&mut self) -> Option<(usize, usize)> {
        let sib: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| {
                !self.tasks[i].deleted
                    && self.tasks[i].kids.iter().filter(|&&c| self.free(c)).count() >= 2
            })
            .collect();
        if let Some(p) = self.pick_free(&sib).or_else(|| sib.first().copied()) {
            let free: Vec<usize> = self.tasks[p]
                .kids
                .iter()
                .copied()
                .filter(|&c| self.free(c))
                .collect();
            return Some((free[0], free[1]));
        }
        let kids = self.children_on_disk();
        let a = self.pick_free(&kids);
        let b = a.and_then(|a| {
            let others: Vec<usize> = kids.iter().copied().filter(|&x| x != a).collect();
            self.pick_free(&others)
        });
        a.zip(b)
    }

    /// `shared_prefix_192`: two children whose instructions open with the same long context paragraph
    /// (≥ 240 characters) and then ask for distinct tasks.
    fn trap_shared_prefix(&mut self) {
        let Some((a, b)) = self.shared_prefix_pair() else {
            return;
        };
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

    /// `escaped_mention`, `whitespace_variant`, `html_entity_variant`: the parent's `newTask` content and the
    /// child's first message differ the way the extension transforms them.
    fn trap_text_variant(&mut self, variant: Variant, label: &str) {
        let kids = self.children_on_disk();
        if let Some(c) = self.pick_free(&kids) {
            let base = self.tasks[c].instruction.clone();
            let (raw, text) = variant_pair(&base, variant, &mut self.rng);
            self.set_child_text(c, raw, text);
            self.label(c, label);
        }
    }

    /// `parent_deleted`: a new orchestrator with one or two children, whose own folder is not written.
    fn trap_deleted_parent(&mut self) {
        let room = self.room();
        if let (Some(era), true) = (self.next_era(true), room >= 1) {
            let ws = self.rng.below(self.ws.len() as u64) as usize;
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
    }

    /// `ui_truncated` / `parent_ui_truncated`: a parent whose UI file ends right after its first `newTask`.
    fn trap_truncated_parent_ui(&mut self) {
        let parents: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| !self.tasks[i].kids.is_empty() && !self.tasks[i].deleted && self.free(i))
            .collect();
        if let Some(p) = self.pick_free(&parents) {
            self.tasks[p].ui_truncated = true;
            self.label(p, "ui_truncated");
            for c in self.tasks[p].kids.clone() {
                self.label(c, "parent_ui_truncated");
            }
        }
    }

    /// `decoy_parent_after_child`: a look-alike parent issues the same instruction after the real child
    /// was created.
    fn trap_decoy_parent(&mut self) {
        let kids = self.children_of_present_parents();
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
            self.copy_child_text(c1, c2);
            self.tasks[p2].anchor = Some(Anchor::AfterChild(c1));
            for i in [c1, p2, c2] {
                self.label(i, "decoy_parent_after_child");
            }
        }
    }

    /// `same_instruction_two_workspaces`: a child's instruction issued at about the same time by a parent
    /// in another workspace.
    fn trap_same_instruction_two_workspaces(&mut self) {
        let n_ws = self.ws.len();
        if n_ws < 2 || self.room() < 2 {
            return;
        }
        let kids = self.children_of_present_parents();
        if let Some(c1) = self.pick_free(&kids) {
            let era = self.tasks[c1].era;
            let ws = (self.tasks[c1].ws + 1 + self.rng.below(n_ws as u64 - 1) as usize) % n_ws;
            let p2 = self.push(era, ws, Mode::Orchestrator, None);
            let m = self.tasks[c1].mode;
            let c2 = self.push(era, ws, m, Some(p2));
            self.count_era(era, 2);
            self.texts(p2);
            self.copy_child_text(c1, c2);
            self.tasks[p2].anchor = Some(Anchor::NearNewTask(c1));
            for i in [c1, c2] {
                self.label(i, "same_instruction_two_workspaces");
            }
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
