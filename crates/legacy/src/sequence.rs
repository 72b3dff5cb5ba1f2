//! The legacy `sequence` of one task (spec: legacy-server.md §2.6.4): the items the builder reads
//! from the api history and the UI messages, the messages and actions it makes of them, their
//! counts, `isCompleted`, and the sequence itself when it is asked for.

use crate::analysis::Parsed;
use crate::js::{js_date_value, js_trim, json_parse, prop, prop_str, v8_sort_order};
use roo_js::{
    number_value, stringify, to_string, truthy, utf16_len_upto, utf16_prefix, utf16_suffix_last,
};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// ECMAScript `ToNumber` of a string (`StringNumericLiteral`).
fn js_string_to_number(s: &str) -> f64 {
    let t = js_trim(s);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            if rest.is_empty() || !rest.chars().all(|c| c.is_digit(radix)) {
                return f64::NAN;
            }
            return rest.chars().fold(0.0, |acc, c| {
                acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
            });
        }
    }
    let unsigned = t.trim_start_matches(['+', '-']);
    if unsigned == "Infinity" && t.len() - unsigned.len() <= 1 {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let valid = t.len() - unsigned.len() <= 1
        && !unsigned.is_empty()
        && unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && unsigned
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.');
    if !valid {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// JS `v > 0` for a property that may be absent.
fn js_greater_than_zero(v: Option<&Value>) -> bool {
    let n = match v {
        None | Some(Value::Null) | Some(Value::Object(_)) => return false,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => number_value(n),
        Some(Value::String(s)) => js_string_to_number(s),
        Some(a @ Value::Array(_)) => js_string_to_number(&to_string(a)),
    };
    n > 0.0
}

/// The items the sequence builder reads from one file (`readJsonFile`), given the content's
/// `JSON.parse` result (read once for all the builder's readers; its arrays are borrowed); `None`
/// when spreading the result would throw (a `messages` object that has a positive `length` but is
/// not iterable).
fn read_sequence_items<'v>(content: &str, parsed: Option<&'v Value>) -> Option<Cow<'v, [Value]>> {
    if let Some(data) = parsed {
        match data {
            Value::Array(a) if !a.is_empty() => return Some(Cow::Borrowed(a.as_slice())),
            Value::Object(o) => match o.get("messages") {
                Some(Value::Array(a)) if !a.is_empty() => return Some(Cow::Borrowed(a.as_slice())),
                // A non-empty string is spread into its code points.
                Some(Value::String(s)) if !s.is_empty() => {
                    return Some(Cow::Owned(
                        s.chars().map(|c| Value::String(c.to_string())).collect(),
                    ))
                }
                Some(Value::Object(m)) if js_greater_than_zero(m.get("length")) => return None,
                _ => {}
            },
            _ => {}
        }
    }
    let mut sanitized = js_trim(content);
    if let Some(s) = sanitized.strip_suffix(',') {
        sanitized = s;
    }
    let wrapped;
    let candidate = if !sanitized.starts_with('[') && !sanitized.ends_with(']') {
        wrapped = format!("[{sanitized}]");
        wrapped.as_str()
    } else {
        sanitized
    };
    if let Some(v) = json_parse(candidate) {
        return Some(Cow::Owned(match v {
            Value::Array(a) => a,
            _ => Vec::new(),
        }));
    }
    Some(Cow::Owned(
        content
            .split('\n')
            .filter(|l| !js_trim(l).is_empty())
            .filter_map(json_parse)
            .collect(),
    ))
}

/// `item.content ?? item.text` (`null` counting as absent).
fn content_of(item: &Value) -> Option<&Value> {
    match prop(item, "content") {
        Some(v) if !v.is_null() => Some(v),
        _ => prop(item, "text").filter(|v| !v.is_null()),
    }
}

/// Whether the item's content is an array holding a `null` part, on which the builder throws.
fn has_null_part(item: &Value) -> bool {
    matches!(content_of(item), Some(Value::Array(parts)) if parts.iter().any(Value::is_null))
}

/// `item.content ?? item.text ?? ''` turned into the sequence's message text (before truncation).
fn message_text(item: &Value) -> String {
    let text = match content_of(item) {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<String> = parts
                .iter()
                .filter(|p| prop_str(p, "type") == Some("text") && truthy(prop(p, "text")))
                .filter_map(|p| prop(p, "text").map(to_string))
                .collect();
            if texts.is_empty() {
                "[contenu non textuel]".to_owned()
            } else {
                texts.join("\n\n")
            }
        }
        Some(other) => return stringify(other),
    };
    if text.contains("\"sequence\"") || text.contains("\"taskId\"") {
        return "[Contenu suspect ignoré pour éviter une boucle]".to_owned();
    }
    text
}

/// The sequence's message text, cut in the middle past 400 units.
fn message_content(item: &Value) -> String {
    truncate_content(message_text(item))
}

/// `first 200 + '...' + last 200` when longer than 400 UTF-16 units.
fn truncate_content(s: String) -> String {
    if utf16_len_upto(&s, 401) <= 400 {
        return s;
    }
    let mut out = utf16_prefix(&s, 200).into_owned();
    out.push_str("...");
    out.push_str(&utf16_suffix_last(&s, 200));
    out
}

/// The legacy `sequence` built from the api then ui items (§2.6.4): every item with a role, or of
/// type `say`, is a message `{role, content, timestamp, isTruncated}`; `tool`/`command`/`tool_use`/
/// `tool_result` items are actions; stable-sorted by date. `None` where building it throws.
fn legacy_sequence(items: &[&Value]) -> Option<Vec<Value>> {
    const EPOCH: &str = "1970-01-01T00:00:00.000Z";
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    let mut keys: Vec<f64> = Vec::with_capacity(items.len());
    for &item in items {
        if item.is_null() {
            return None;
        }
        let ts_value = prop(item, "timestamp").filter(|v| truthy(Some(v)));
        let key = ts_value.map_or(0.0, js_date_value);
        let timestamp = ts_value
            .cloned()
            .unwrap_or_else(|| Value::String(EPOCH.to_owned()));
        let ty = prop_str(item, "type");
        let role = match prop(item, "role").filter(|r| truthy(Some(r))) {
            Some(r) => r.clone(),
            None => Value::String(
                if ty == Some("ask") {
                    "user"
                } else {
                    "assistant"
                }
                .to_owned(),
            ),
        };
        let user_or_assistant = matches!(role.as_str(), Some("user" | "assistant"));
        if user_or_assistant || ty == Some("say") {
            if has_null_part(item) {
                return None;
            }
            let text = message_text(item);
            let is_truncated = utf16_len_upto(&text, 401) > 400;
            let text = truncate_content(text);
            let mut m = Map::new();
            m.insert("role".into(), role);
            m.insert("content".into(), Value::String(text));
            m.insert("timestamp".into(), timestamp);
            m.insert("isTruncated".into(), Value::Bool(is_truncated));
            out.push(Value::Object(m));
            keys.push(key);
        } else if matches!(ty, Some("tool" | "command" | "tool_use" | "tool_result")) {
            let mut a = Map::new();
            let kind = if ty == Some("command") {
                "command"
            } else {
                "tool"
            };
            a.insert("type".into(), Value::String(kind.to_owned()));
            let name = [prop(item, "tool"), prop(item, "name")]
                .into_iter()
                .flatten()
                .find(|v| truthy(Some(v)))
                .cloned()
                .unwrap_or_else(|| Value::String("unknown_action".to_owned()));
            a.insert("name".into(), name);
            let params = [prop(item, "toolInput"), prop(item, "parameters")]
                .into_iter()
                .flatten()
                .find(|v| truthy(Some(v)))
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            a.insert("parameters".into(), params);
            let status = if truthy(prop(item, "isError")) {
                "failure"
            } else if prop(item, "toolResult").is_some_and(|v| !v.is_null()) {
                "success"
            } else {
                "in_progress"
            };
            a.insert("status".into(), Value::String(status.to_owned()));
            a.insert("timestamp".into(), timestamp);
            out.push(Value::Object(a));
            keys.push(key);
        }
    }
    let order = v8_sort_order(&keys);
    let mut slots: Vec<Option<Value>> = out.into_iter().map(Some).collect();
    Some(
        order
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take))
            .collect(),
    )
}

struct SequenceEntry<'a> {
    item: &'a Value,
    is_message: bool,
    is_assistant: bool,
}

/// Counts and `isCompleted` of the legacy `sequence`; `None` where building it throws (a `null` item,
/// or a `null` part in a message's content array).
fn sequence_summary(items: &[&Value]) -> Option<(u32, u32, bool)> {
    let mut entries: Vec<SequenceEntry<'_>> = Vec::with_capacity(items.len());
    let mut keys: Vec<f64> = Vec::with_capacity(items.len());
    for &item in items {
        if item.is_null() {
            return None;
        }
        let key = match prop(item, "timestamp") {
            Some(v) if truthy(Some(v)) => js_date_value(v),
            _ => 0.0,
        };
        let role = prop(item, "role");
        let (user_or_assistant, is_assistant) = if truthy(role) {
            let r = role.and_then(Value::as_str);
            (
                matches!(r, Some("user" | "assistant")),
                r == Some("assistant"),
            )
        } else {
            let is_ask = prop_str(item, "type") == Some("ask");
            (true, !is_ask)
        };
        let ty = prop_str(item, "type");
        if user_or_assistant || ty == Some("say") {
            if has_null_part(item) {
                return None;
            }
            entries.push(SequenceEntry {
                item,
                is_message: true,
                is_assistant,
            });
            keys.push(key);
        } else if matches!(ty, Some("tool" | "command" | "tool_use" | "tool_result")) {
            entries.push(SequenceEntry {
                item,
                is_message: false,
                is_assistant: false,
            });
            keys.push(key);
        }
    }
    let messages = entries.iter().filter(|e| e.is_message).count();
    let actions = entries.len() - messages;
    let order = v8_sort_order(&keys);
    let last_assistant = order
        .iter()
        .rev()
        .filter_map(|&i| entries.get(i))
        .find(|e| e.is_message && e.is_assistant);
    let completed = last_assistant.is_some_and(|e| {
        message_content(e.item)
            .to_lowercase()
            .contains("attempt_completion")
    });
    Some((
        u32::try_from(messages).unwrap_or(u32::MAX),
        u32::try_from(actions).unwrap_or(u32::MAX),
        completed,
    ))
}

/// The counts of the api history and UI messages read as one sequence, and that sequence.
pub(crate) struct SequenceFacts {
    pub(crate) message_count: u32,
    pub(crate) action_count: u32,
    pub(crate) is_completed: bool,
    pub(crate) sequence: Option<Vec<Value>>,
}

impl SequenceFacts {
    /// `None` where the builder throws (a `null` item, …).
    pub(crate) fn read(
        api: Option<&Parsed>,
        ui: Option<&Parsed>,
        with_sequence: bool,
    ) -> Option<SequenceFacts> {
        let api_items = match api {
            Some(c) => read_sequence_items(c.text, c.value.as_ref())?,
            None => Cow::Borrowed(&[][..]),
        };
        let ui_items = match ui {
            Some(c) => read_sequence_items(c.text, c.value.as_ref())?,
            None => Cow::Borrowed(&[][..]),
        };
        let all: Vec<&Value> = api_items.iter().chain(ui_items.iter()).collect();
        let (message_count, action_count, is_completed) = sequence_summary(&all)?;
        let sequence = if with_sequence {
            Some(legacy_sequence(&all)?)
        } else {
            None
        };
        Some(SequenceFacts {
            message_count,
            action_count,
            is_completed,
            sequence,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roo_js::utf16_len;
    use serde_json::json;

    #[test]
    fn sequence_reader_stages() {
        let n = |s: &str| read_sequence_items(s, json_parse(s).as_ref()).map(|v| v.len());
        assert_eq!(n("[1,2]"), Some(2));
        assert_eq!(n("{\"messages\":[1]}"), Some(1));
        assert_eq!(n("{\"messages\":\"ab😀\"}"), Some(3));
        assert_eq!(n("{\"messages\":{\"length\":\"2\"}}"), None);
        assert_eq!(n("{\"messages\":{\"length\":0}}"), Some(1));
        assert_eq!(n("{\"a\":1}"), Some(1));
        assert_eq!(n("[]"), Some(0));
        assert_eq!(n(""), Some(0));
        assert_eq!(n("5"), Some(1));
        assert_eq!(n("{\"a\":1},{\"b\":2},"), Some(2));
        assert_eq!(n("{\"a\":1}\n{\"b\":2\n{\"c\":3}"), Some(2));
    }

    #[test]
    fn content_rules() {
        let item = json!({"content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]});
        assert_eq!(message_content(&item), "a\n\nb");
        assert_eq!(
            message_content(&json!({"content":[{"type":"image"}]})),
            "[contenu non textuel]"
        );
        assert_eq!(
            message_content(&json!({"text":"x \"taskId\" y"})),
            "[Contenu suspect ignoré pour éviter une boucle]"
        );
        assert_eq!(
            message_content(&json!({"content":{"taskId":1}})),
            "{\"taskId\":1}"
        );
        assert_eq!(message_content(&json!({"content":null,"text":5})), "5");
        let long = "a".repeat(199) + "😀" + &"b".repeat(300);
        let c = message_content(&json!({ "text": long }));
        assert_eq!(utf16_len(&c), 403);
        assert!(c.starts_with(&("a".repeat(199) + "\u{FFFD}...")));
    }

    #[test]
    fn string_to_number() {
        assert_eq!(js_string_to_number(" 12 "), 12.0);
        assert_eq!(js_string_to_number("0x10"), 16.0);
        assert_eq!(js_string_to_number(""), 0.0);
        assert!(js_string_to_number("inf").is_nan());
        assert!(js_string_to_number("1a").is_nan());
        assert_eq!(js_string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert_eq!(js_string_to_number(".5"), 0.5);
    }
}
