//! The turns of a task: ordinary turns (one tool call each), the `newTask` of a child and the child's
//! result coming back, and the completion.

use serde_json::{json, Map, Value};

use super::messages::{Call, UBlock};
use super::tools::ToolStep;
use super::{Clock, Gen};
use crate::md5::md5_hex;
use crate::plan::ChildEvent;
use crate::text::{self, Lang};

impl Gen<'_> {
    /// The turn's reasoning, if any: more often with reasoning models, never with the older Claude models of
    /// the native eras.
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

    /// One ordinary turn: read, edit, command, search, list, question or todo update.
    pub(super) fn filler_turn(&mut self, start: u64, end: u64) {
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
        let id = self.call_id();
        let ToolStep {
            call,
            ui,
            desc,
            body,
        } = self.tool_step(action, id, payload);
        let out_bytes = prose.len()
            + reasoning.as_ref().map_or(0, |r| r.len())
            + call.input.to_string().len() / 2;
        self.api_req(&mut clock, request, in_bytes, out_bytes);
        self.say_reasoning(&mut clock, reasoning.as_deref());
        let ts = clock.next(&mut self.rng);
        self.say(ts, "text", Some(prose.clone()), Some(false), None);
        let tool_ts = clock.next(&mut self.rng);
        self.show_tool(&mut clock, tool_ts, ui);
        self.emit_assistant(tool_ts + 7, reasoning.as_deref(), Some(&prose), &call);
        self.pending.push(UBlock::Result {
            id: call.id,
            name: call.name,
            desc,
            body,
        });
    }

    /// The turn that creates child `ev.child` with `new_task` (`first_child`: where the truncated-UI trap
    /// cuts the parent's UI file).
    pub(super) fn newtask_turn(&mut self, start: u64, ev: &ChildEvent, first_child: bool) {
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
        self.say_reasoning(&mut clock, reasoning.as_deref());
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

    /// The child's result coming back to the parent: `subtask_result` and the tool result of delegation, or
    /// the `[new_task completed]` user message of the older eras.
    pub(super) fn child_done(&mut self, ev: &ChildEvent) {
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

    /// The last turn: `attempt_completion` with the task's result.
    pub(super) fn completion_turn(&mut self, start: u64) {
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
        self.say_reasoning(&mut clock, reasoning.as_deref());
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
}
