//! The tool calls of an ordinary turn (read, edit, create, command, search, list, question, todo update):
//! for each, the call the model sends, what the UI shows and what the tool returns, sized by the turn's
//! payload.

use serde_json::{json, Value};

use super::messages::Call;
use super::{Clock, Gen};
use crate::md5::md5_hex;
use crate::text;
use crate::Era;

/// What the UI shows for a tool call.
pub(super) enum UiTool {
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

/// One tool call of a turn.
pub(super) struct ToolStep {
    pub(super) call: Call,
    pub(super) ui: UiTool,
    /// The `[…] Result:` label of the result in the XML eras.
    pub(super) desc: String,
    /// The tool's result as the model reads it.
    pub(super) body: String,
}

impl ToolStep {
    fn new(call: Call, ui: UiTool, desc: String, body: String) -> Self {
        ToolStep {
            call,
            ui,
            desc,
            body,
        }
    }
}

impl Gen<'_> {
    /// The tool call of an ordinary turn: `action` is the index drawn from the turn's weights (0 read,
    /// 1 edit, 2 create, 3 command, 4 search, 5 list, 6 question, otherwise a todo update).
    pub(super) fn tool_step(&mut self, action: usize, id: String, payload: usize) -> ToolStep {
        match action {
            0 => self.read_file_step(id, payload),
            1 => self.apply_diff_step(id, payload),
            2 => self.write_file_step(id, payload),
            3 => self.command_step(id, payload),
            4 => self.search_step(id, payload),
            5 => self.list_files_step(id),
            6 => self.followup_step(id),
            _ => self.todo_step(id),
        }
    }

    /// `read_file` of a source file of about `payload` bytes, numbered as the era's tool returns it.
    fn read_file_step(&mut self, id: String, payload: usize) -> ToolStep {
        let native = !self.st.xml;
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
        ToolStep::new(
            call,
            UiTool::Tool { json, edit: false },
            format!("read_file for '{path}'"),
            body,
        )
    }

    /// `apply_diff` (`write_to_file` in the claude-dev era) with a SEARCH/REPLACE diff.
    fn apply_diff_step(&mut self, id: String, payload: usize) -> ToolStep {
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
        ToolStep::new(
            call,
            UiTool::Tool { json, edit: true },
            format!("{name} for '{path}'"),
            body,
        )
    }

    /// `write_to_file` of a new source file.
    fn write_file_step(&mut self, id: String, payload: usize) -> ToolStep {
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
        ToolStep::new(
            call,
            UiTool::Tool { json, edit: true },
            format!("write_to_file for '{path}'"),
            body,
        )
    }

    /// `execute_command` of the workspace's test command, failing three times in ten.
    fn command_step(&mut self, id: String, payload: usize) -> ToolStep {
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
        ToolStep::new(
            call,
            UiTool::Command {
                cmd: cmd.clone(),
                output,
            },
            format!("execute_command for '{cmd}'"),
            body,
        )
    }

    /// `search_files` for calls of a function of the workspace.
    fn search_step(&mut self, id: String, payload: usize) -> ToolStep {
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
        ToolStep::new(
            call,
            UiTool::Tool { json, edit: false },
            format!("search_files for '{regex}' in '{pattern}'"),
            results,
        )
    }

    /// `list_files` of the whole workspace.
    fn list_files_step(&mut self, id: String) -> ToolStep {
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
        ToolStep::new(
            call,
            UiTool::Tool { json, edit: false },
            "list_files for '.'".to_string(),
            listing,
        )
    }

    /// `ask_followup_question` with two suggestions, the user picking one of them.
    fn followup_step(&mut self, id: String) -> ToolStep {
        let native = !self.st.xml;
        let (lang, slots) = (self.lang(), self.slots());
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
        ToolStep::new(
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

    /// `update_todo_list`: creates the list, or moves its first open item one status on.
    fn todo_step(&mut self, id: String) -> ToolStep {
        if self.todos.is_empty() {
            let (lang, slots) = (self.lang(), self.slots());
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
        ToolStep::new(
            call,
            UiTool::Tool { json, edit: false },
            "update_todo_list".to_string(),
            "Todo list updated successfully.".to_string(),
        )
    }

    /// Shows the tool call in the UI at `tool_ts`: the tool or command (its output in chunks), or the question
    /// and the user's answer; an edit is followed by a checkpoint, and files it names become open tabs.
    pub(super) fn show_tool(&mut self, clock: &mut Clock, tool_ts: u64, ui: UiTool) {
        match ui {
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
                    let ts = clock.next(&mut self.rng);
                    self.checkpoint(ts);
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
                    let ts = clock.next(&mut self.rng);
                    self.say(ts, "command_output", Some(a.to_string()), None, None);
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
                let ts = clock.next(&mut self.rng);
                self.say(ts, "user_feedback", Some(answer), None, None);
            }
        }
    }

    /// The todo list as the UI's `updateTodoList` shows it (ids are the MD5 of content and status).
    fn todos_value(&self) -> Value {
        Value::Array(
            self.todos
                .iter()
                .map(|(c, s)| json!({"id": md5_hex(format!("{c}{s}").as_bytes()), "content": c, "status": s}))
                .collect(),
        )
    }
}
