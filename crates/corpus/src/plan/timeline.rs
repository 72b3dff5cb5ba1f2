//! Sizes and times: each task's byte budget and turns per segment, the timeline of every tree (children
//! inside their parent's run, trap roots placed relative to the child they imitate), and the ids that
//! depend on it.

use super::{Anchor, ChildEvent, Planner, Segment};

impl Planner<'_> {
    /// Draws every task's byte budget (scaled to the target size, if any), its filler turns per segment
    /// (the stretches between `newTask`s) and its time per turn.
    pub(super) fn budgets(&mut self) {
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

    /// Lays out task `idx` and, recursively, its children from `start`; returns its end time.
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

    /// Lays out every tree: free roots anywhere in their era's window, then the anchored roots of the
    /// decoy and two-workspace traps relative to the child they imitate.
    pub(super) fn layout_all(&mut self) {
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

    /// Task ids: UUID v7 from the start time in the eras that use them, UUID v4 before.
    pub(super) fn ids(&mut self) {
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
