//! A cached header line read straight into the handle's lean form ([`lean_out`] of the whole
//! header, without building what it drops). The match keys (`truncatedInstruction`,
//! `childTaskInstructionPrefixes`) are stepped over, and each child call's `todos` is taken as the
//! JSON text it is in the line rather than built into values (maps, strings, arrays: a fifth of a
//! header's allocations at 50 000 tasks) and written back to text.
//!
//! The header's own `Deserialize` does the rest: the reader only wraps serde_json's, and skips or
//! takes those keys as the maps go by, so no field list is written twice.
//!
//! [`lean_out`]: super::lean_out

use roo_state::ConversationSkeleton;
use serde::de::value::{BorrowedStrDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::cell::RefCell;
use std::fmt;

/// The header in `line` without its match keys, and its calls' todos as `[[call, todos], …]`
/// (`None`: no call has any), as [`lean_out`](super::lean_out) would leave and return them. The
/// line is text, checked as UTF-8 whole by the caller: read from bytes, serde_json would check
/// each string and key on its own, a call for each (a fifth of the CPU time of reading 50 000
/// headers).
pub(crate) fn lean_header(
    line: &str,
) -> serde_json::Result<(ConversationSkeleton, Option<Box<str>>)> {
    let todos = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_str(line);
    let header = Lean {
        de: &mut de,
        at: At::Header,
        todos: &todos,
    };
    let skeleton: ConversationSkeleton = serde::Deserialize::deserialize(header)?;
    de.end()?;
    Ok((skeleton, todos_text(&todos.into_inner())))
}

/// `[[call, todos], …]` of the todos taken, as [`lean_out`](super::lean_out) writes it.
fn todos_text(todos: &[(usize, &RawValue)]) -> Option<Box<str>> {
    if todos.is_empty() {
        return None;
    }
    let mut text = String::with_capacity(todos.iter().map(|t| t.1.get().len() + 24).sum());
    for (n, (call, raw)) in todos.iter().enumerate() {
        text.push_str(if n == 0 { "[[" } else { ",[" });
        text.push_str(&call.to_string());
        text.push(',');
        text.push_str(raw.get());
        text.push(']');
    }
    text.push(']');
    Some(text.into_boxed_str())
}

/// Where in a header the reader is.
#[derive(Clone, Copy)]
enum At {
    /// The header object.
    Header,
    /// The `childTasks` array.
    Calls,
    /// The child call at this position.
    Call(usize),
}

impl At {
    /// `seed`, for a value at this place.
    fn seed<'t, 'de, S>(self, seed: S, todos: &'t Todos<'de>) -> LeanSeed<'t, 'de, S> {
        LeanSeed {
            seed,
            at: self,
            todos,
        }
    }
}

/// How [`LeanMap`] reads a value.
#[derive(Clone, Copy)]
enum Next {
    /// Through [`Lean`], at this place.
    Lean(At),
    /// Stepped over, and given as an empty list.
    Empty,
}

type Todos<'de> = RefCell<Vec<(usize, &'de RawValue)>>;

/// serde_json's deserializer, with the header's and the calls' maps read through [`LeanMap`].
struct Lean<'t, 'de, D> {
    de: D,
    at: At,
    todos: &'t Todos<'de>,
}

impl<'t, 'de, D> Lean<'t, 'de, D> {
    fn visitor<V>(&self, inner: V) -> LeanVisitor<'t, 'de, V> {
        LeanVisitor {
            inner,
            at: self.at,
            todos: self.todos,
        }
    }
}

/// Methods of [`Lean`] that hand the call to serde_json's deserializer as it is.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: de::Deserializer<'de>> de::Deserializer<'de> for Lean<'_, 'de, D> {
    type Error = D::Error;

    forward! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
        deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
        deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
        deserialize_string(); deserialize_bytes(); deserialize_byte_buf(); deserialize_option();
        deserialize_unit(); deserialize_map(); deserialize_identifier(); deserialize_ignored_any();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }

    // The two that lead to the maps of a header and of its calls.

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.de.deserialize_seq(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.visitor(visitor);
        self.de.deserialize_struct(name, fields, visitor)
    }
}

/// The visitor the header's `Deserialize` gave, handed the maps and sequences read through
/// [`LeanMap`] and [`LeanSeq`].
struct LeanVisitor<'t, 'de, V> {
    inner: V,
    at: At,
    todos: &'t Todos<'de>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for LeanVisitor<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(LeanMap {
            map,
            at: self.at,
            next: None,
            todos: self.todos,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        match self.at {
            At::Calls => self.inner.visit_seq(LeanSeq {
                seq,
                next: 0,
                todos: self.todos,
            }),
            _ => self.inner.visit_seq(seq),
        }
    }
}

/// A map of the header or of a call: the keys the lean form leaves out are read here and never
/// reach the header's `Deserialize` (which takes a missing optional field as `None`).
struct LeanMap<'t, 'de, A> {
    map: A,
    at: At,
    /// How to read the value of the key just given (`None`: as it is).
    next: Option<Next>,
    todos: &'t Todos<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for LeanMap<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<&'de str>()? else {
                return Ok(None);
            };
            self.next = None;
            match (self.at, key) {
                // An optional field left out is `None`.
                (At::Header, "truncatedInstruction") => {
                    self.map.next_value::<IgnoredAny>()?;
                }
                (At::Call(call), "todos") => {
                    let raw: &'de RawValue = self.map.next_value()?;
                    if raw.get() != "null" {
                        self.todos.borrow_mut().push((call, raw));
                    }
                }
                (at, key) => {
                    self.next = match (at, key) {
                        (At::Header, "childTasks") => Some(Next::Lean(At::Calls)),
                        // A list the header requires.
                        (At::Header, "childTaskInstructionPrefixes") => Some(Next::Empty),
                        _ => None,
                    };
                    return seed
                        .deserialize(BorrowedStrDeserializer::new(key))
                        .map(Some);
                }
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.next.take() {
            Some(Next::Lean(at)) => self.map.next_value_seed(at.seed(seed, self.todos)),
            Some(Next::Empty) => {
                self.map.next_value::<IgnoredAny>()?;
                seed.deserialize(SeqDeserializer::new(std::iter::empty::<()>()))
            }
            None => self.map.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// The `childTasks` array: each call is read through [`LeanMap`], knowing its position.
struct LeanSeq<'t, 'de, A> {
    seq: A,
    next: usize,
    todos: &'t Todos<'de>,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for LeanSeq<'_, 'de, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let at = At::Call(self.next);
        self.next += 1;
        self.seq.next_element_seed(at.seed(seed, self.todos))
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A value's seed, given the value's deserializer through [`Lean`].
struct LeanSeed<'t, 'de, S> {
    seed: S,
    at: At,
    todos: &'t Todos<'de>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for LeanSeed<'_, 'de, S> {
    type Value = S::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Lean {
            de,
            at: self.at,
            todos: self.todos,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header as the cache writes it: match keys, three calls (two with todos), an unknown key.
    fn line() -> String {
        let todos = r#"[{"content":"a \"quoted\" step","status":"completed"},{"content":"é","status":"pending","extra":1.5}]"#;
        format!(
            concat!(
                r#"{{"taskId":"t1","metadata":{{"title":"T","createdAt":"2025-01-01T00:00:00.000Z","#,
                r#""lastActivity":"2025-01-01T00:00:01.000Z","messageCount":2,"actionCount":0,"totalSize":10,"#,
                r#""dataSource":"/x/t1","source":"roo","datesFrom":"ui_messages"}},"#,
                r#""childTaskInstructionPrefixes":["do a","do b"],"isCompleted":false,"#,
                r#""truncatedInstruction":"the task","instruction":"The task","#,
                r#""childTasks":[{{"ts":1,"message":"Do A","todos":{todos},"sources":["ui_ask"]}},"#,
                r#"{{"ts":2,"message":"Do B","sources":["ui_ask"],"todos":null}},"#,
                r#"{{"ts":3,"mode":"code","message":"Do \"C\"","todos":[],"sources":["tool_use"],"childTaskId":"t9"}}],"#,
                r#""storedLinks":{{}},"apiTotals":{{"requests":1,"tokensIn":1.0,"tokensOut":2.0,"#,
                r#""cacheWrites":0.0,"cacheReads":0.0,"totalCost":0.5}},"files":{{"uiMessages":2,"#,
                r#""apiHistory":false,"apiMessages":0,"historyItem":false,"taskMetadata":false}},"#,
                r#""diagnostics":[],"notAField":{{"todos":[1]}}}}"#
            ),
            todos = todos
        )
    }

    #[test]
    fn a_lean_read_equals_a_whole_read_leaned_out() {
        let line = line();
        let mut whole: ConversationSkeleton = serde_json::from_str(&line).expect("whole");
        assert!(whole.truncated_instruction.is_some());
        assert_eq!(whole.child_task_instruction_prefixes.len(), 2);
        let todos = super::super::lean_out(&mut whole);
        let (lean, lean_todos) = lean_header(&line).expect("lean");
        assert_eq!(lean, whole);
        assert_eq!(lean_todos, todos);
        let text = lean_todos.expect("todos");
        assert!(
            text.starts_with("[[0,[{\"content\":\"a \\\"quoted\\\" step\""),
            "{text}"
        );
        assert!(text.ends_with(",[2,[]]]"), "{text}");
        assert_eq!(lean.child_tasks[2].child_task_id.as_deref(), Some("t9"));
    }

    #[test]
    fn a_header_without_todos_has_none_and_a_broken_line_fails() {
        let line = line();
        let plain = line
            .replace(r#","todos":null"#, "")
            .replace(r#","todos":[]"#, "");
        let cut = plain.find(r#","todos":[{"#).expect("todos");
        let end = plain[cut..].find(r#"],"sources""#).expect("end") + cut + 1;
        let plain = format!("{}{}", &plain[..cut], &plain[end..]);
        let (lean, todos) = lean_header(&plain).expect("lean");
        assert_eq!(todos, None);
        assert!(lean.child_tasks.iter().all(|c| c.todos.is_none()));
        assert!(lean_header(&line[..line.len() - 3]).is_err());
        assert!(lean_header(&format!("{line} x")).is_err());
    }
}
