//! Hand-written scanners for the few structures the extension embeds in free text: wrapper tags,
//! environment-details headers, XML tool calls of the XML era and the `[new_task in …]` result
//! lines. Plain string searching, no regular expressions.

/// The text between the first `<tag>` and the following `</tag>`, if both are present.
pub fn tag_content<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = find(text, &open)? + open.len();
    let end = find(&text[start..], &close)? + start;
    Some(&text[start..end])
}

/// Wrappers the extension puts around what the user typed, by era.
const USER_WRAPPERS: [&str; 4] = ["task", "user_message", "feedback", "answer"];

/// What the user typed, without the `<task>` / `<user_message>` / `<feedback>` / `<answer>`
/// wrapper, trimmed. Text without a wrapper is returned trimmed.
pub fn unwrap_user_text(text: &str) -> &str {
    let trimmed = text.trim();
    for tag in USER_WRAPPERS {
        let Some(rest) = trimmed
            .strip_prefix('<')
            .and_then(|r| r.strip_prefix(tag))
            .and_then(|r| r.strip_prefix('>'))
        else {
            continue;
        };
        // Closed at the very end: everything between; else the first `</tag>` ends the text.
        if let Some(inner) = rest
            .strip_suffix('>')
            .and_then(|r| r.strip_suffix(tag))
            .and_then(|r| r.strip_suffix("</"))
        {
            return inner.trim();
        }
        let mut from = 0;
        while let Some(at) = rest[from..].find("</") {
            let start = from + at;
            let after = &rest[start + 2..];
            if after.strip_prefix(tag).is_some_and(|r| r.starts_with('>')) {
                return rest[..start].trim();
            }
            from = start + 2;
        }
    }
    trimmed
}

/// True for the `<environment_details>` block the extension appends to every user turn.
pub fn is_environment_details(text: &str) -> bool {
    text.trim_start().starts_with("<environment_details>")
}

/// The workspace path printed in the first turn's environment details:
/// `# Current Workspace Directory (<path>) Files` (v3.11.11+) or
/// `# Current Working Directory (<path>) Files` (before).
pub fn environment_workspace(text: &str) -> Option<&str> {
    for header in [
        "# Current Workspace Directory (",
        "# Current Working Directory (",
    ] {
        if let Some(at) = text.find(header) {
            let rest = &text[at + header.len()..];
            let line = rest.split(['\n', '\r']).next().unwrap_or(rest);
            // The path may itself hold parentheses: cut at the last ") Files" of the line.
            if let Some(end) = line.rfind(") Files") {
                let path = line[..end].trim();
                if !path.is_empty() {
                    return Some(path);
                }
            }
        }
    }
    None
}

/// What a text of a user turn of the API history is. The extension writes the model's tool
/// results, its error notes and the resumption notice as user turns; only some texts are the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserTextKind {
    /// `<environment_details>` (alone in its text).
    Environment,
    /// `[tool for 'x'] Result:` (with or without the result after it): a tool result header.
    ToolResultHeader,
    /// A note the extension wrote (`[ERROR] …`, `[TASK RESUMPTION] …`, the "no tool used" nudge).
    ExtensionNote,
    /// Something the user wrote (the task, an answer, feedback).
    User,
}

/// Classify one text of a user turn (see [`UserTextKind`]).
pub fn user_text_kind(text: &str) -> UserTextKind {
    let t = text.trim_start();
    if is_environment_details(t) {
        return UserTextKind::Environment;
    }
    if t.starts_with('[') {
        let first_line = t.lines().next().unwrap_or("");
        if first_line.contains("] Result:") || first_line.trim_end().ends_with("] Result") {
            return UserTextKind::ToolResultHeader;
        }
        if first_line.starts_with("[ERROR]") || first_line.starts_with("[TASK RESUMPTION]") {
            return UserTextKind::ExtensionNote;
        }
    }
    UserTextKind::User
}

/// The user's own words inside an extension note or a result turn: `<feedback>` (an answer to a
/// tool or a completion), `<answer>` (a follow-up), or `<user_message>` (a resumption).
pub fn user_words_in(text: &str) -> Option<&str> {
    ["feedback", "answer", "user_message"]
        .iter()
        .find_map(|tag| tag_content(text, tag))
        .map(str::trim)
        .filter(|w| !w.is_empty())
}

/// The mode of environment details: the slug of `# Current Mode\n<slug>code</slug>` (Roo Code,
/// Kilo Code), or `plan` / `act` for Cline's `# Current Mode\nPLAN MODE` / `ACT MODE`.
pub fn environment_mode(text: &str) -> Option<&str> {
    let at = text.find("# Current Mode")?;
    let rest = &text[at..];
    // Cline writes its plan/act switch as a line of its own: `PLAN MODE` or `ACT MODE`.
    let first_line = rest
        .lines()
        .skip(1)
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first_line.starts_with("PLAN MODE") {
        return Some("plan");
    }
    if first_line.starts_with("ACT MODE") {
        return Some("act");
    }
    let slug = tag_content(rest, "slug")?.trim();
    (!slug.is_empty() && slug.len() < 100).then_some(slug)
}

/// A `<new_task>` call written as XML in assistant text (XML-tool era).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlNewTask {
    pub mode: Option<String>,
    pub message: String,
    pub todos: Option<String>,
    /// Byte offset of the call in the text (keeps calls of one message in order).
    pub offset: usize,
}

/// Every `<new_task>…</new_task>` call in `text`. A call cut off at the end of the text (an
/// interrupted stream) is kept when its `<message>` is complete.
pub fn xml_new_tasks(text: &str) -> Vec<XmlNewTask> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while let Some(found) = find(&text[pos..], "<new_task>") {
        let start = pos + found;
        let body_start = start + "<new_task>".len();
        let (body, next) = match find(&text[body_start..], "</new_task>") {
            Some(end) => (
                &text[body_start..body_start + end],
                body_start + end + "</new_task>".len(),
            ),
            None => (&text[body_start..], text.len()),
        };
        if let Some(message) = tag_content(body, "message") {
            let message = message.trim();
            if !message.is_empty() {
                out.push(XmlNewTask {
                    mode: tag_content(body, "mode").map(|m| m.trim().to_owned()),
                    message: message.to_owned(),
                    todos: tag_content(body, "todos").map(|t| t.trim().to_owned()),
                    offset: start,
                });
            }
        }
        pos = next;
    }
    out
}

/// Where `needle` first starts in `text`: `str::find` with memchr's vectorised search, for needles
/// looked for in every long message (a needle is whole UTF-8, so the offset is a char boundary).
/// The searcher of each needle is built once per thread ([`with_finder`]).
pub(crate) fn find(text: &str, needle: &str) -> Option<usize> {
    with_finder(needle, |f| f.find(text.as_bytes()))
}

thread_local! {
    /// The substring searchers of the markers and tags looked for in every message, built once
    /// per thread (building one costs more than searching a short text); the first
    /// [`MAX_KEPT_FINDERS`] needles are kept.
    static FINDERS: std::cell::RefCell<Vec<memchr::memmem::Finder<'static>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

const MAX_KEPT_FINDERS: usize = 16;

fn with_finder<R>(needle: &str, f: impl FnOnce(&memchr::memmem::Finder<'static>) -> R) -> R {
    FINDERS.with(|cell| {
        let mut finders = cell.borrow_mut();
        match finders.iter().position(|x| x.needle() == needle.as_bytes()) {
            Some(at) => f(&finders[at]),
            // Any other needle is searched for without being kept.
            None if finders.len() >= MAX_KEPT_FINDERS => {
                f(&memchr::memmem::Finder::new(needle.as_bytes()).into_owned())
            }
            None => {
                finders.push(memchr::memmem::Finder::new(needle.as_bytes()).into_owned());
                f(&finders[finders.len() - 1])
            }
        }
    })
}

/// `[new_task in <mode name> mode: '<message>'] Result:` — the XML era's tool result header.
/// Returns `(mode name, message)`. The message ends at the last `'] Result:` of the text, so a
/// message quoting `']` is kept whole.
pub fn new_task_result_header(text: &str) -> Option<(&str, &str)> {
    const HEAD: &str = "[new_task in ";
    let start = find(text, HEAD)? + HEAD.len();
    let rest = &text[start..];
    let mode_end = find(rest, " mode: '")?;
    let mode = &rest[..mode_end];
    let msg_start = mode_end + " mode: '".len();
    let tail = &rest[msg_start..];
    let msg_end = tail.rfind("'] Result:").or_else(|| tail.rfind("']"))?;
    Some((mode, &tail[..msg_end]))
}

/// `Delegated to child task <id>` (delegation era tool result).
pub fn delegated_child_id(text: &str) -> Option<&str> {
    let rest = text.trim().strip_prefix("Delegated to child task ")?;
    let id = rest.split_whitespace().next()?;
    (!id.is_empty()).then_some(id)
}

/// `Subtask <id> completed.` (delegation era completion result).
pub fn completed_subtask_id(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix("Subtask ")?;
    let (id, after) = rest.split_once(' ')?;
    after.starts_with("completed").then_some(id)
}

/// True for the completion notice a parent receives (`[new_task completed] Result: …`,
/// `Subtask <id> completed.`).
pub fn is_subtask_completion(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("[new_task completed]") || completed_subtask_id(t).is_some()
}

fn decode_entity(entity: &str) -> Option<char> {
    match entity {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "quot" => Some('"'),
        "apos" | "#39" => Some('\''),
        "nbsp" => Some(' '),
        _ => {
            let num = entity.strip_prefix('#')?;
            let code = if let Some(hex) = num.strip_prefix(['x', 'X']) {
                u32::from_str_radix(hex, 16).ok()?
            } else {
                num.parse::<u32>().ok()?
            };
            char::from_u32(code)
        }
    }
}

/// The instruction key used to match a child task to the `newTask` call that created it.
///
/// One function, used for both sides: un-escapes the `\\@` / `\@` mention escapes, decodes HTML
/// entities (named and numeric), removes the user-text wrapper, lower-cases, and collapses every
/// run of Unicode whitespace to one space. Differences that the extension itself introduces between
/// what the parent wrote and what the child shows therefore vanish.
pub fn normalize_instruction(text: &str) -> String {
    let mut out = String::new();
    normalize_instruction_into(text, &mut out);
    out
}

/// [`normalize_instruction`] appended to `out` (which keeps what it held before).
pub fn normalize_instruction_into(text: &str, out: &mut String) {
    let text = unwrap_user_text(text);
    let bytes = text.as_bytes();
    out.reserve(text.len());
    let start = out.len();
    let mut pending_space = false;
    let mut i = 0usize;
    while i < bytes.len() {
        // Most instructions are largely ASCII: a run of bytes that need no decision is copied at
        // once and lower-cased in place.
        // Single spaces between such bytes stay in the run (nothing to collapse there).
        let mut end = i;
        while let Some(&b) = bytes.get(end) {
            if PLAIN_ASCII[b as usize] {
                end += 1;
            } else if b == b' '
                && end > i
                && bytes.get(end + 1).is_some_and(|&n| PLAIN_ASCII[n as usize])
            {
                end += 2;
            } else {
                break;
            }
        }
        let run = end - i;
        if run > 0 {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            let from = out.len();
            out.push_str(&text[i..i + run]);
            if let Some(tail) = out.get_mut(from..) {
                tail.make_ascii_lowercase();
            }
            i += run;
            continue;
        }
        let b = bytes[i];
        let (c, len) = if b < 0x80 {
            match b {
                b'\\' if bytes[i..].starts_with(b"\\\\@") => ('@', 3),
                b'\\' if bytes[i..].starts_with(b"\\@") => ('@', 2),
                b'&' => match decode_entity_at(&text[i + 1..]) {
                    Some((ch, entity_len)) => (ch, entity_len + 1),
                    None => ('&', 1),
                },
                _ => (b as char, 1),
            }
        } else {
            match text[i..].chars().next() {
                Some(c) => (c, c.len_utf8()),
                None => break,
            }
        };
        i += len;
        if c.is_whitespace() {
            pending_space = out.len() > start;
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if let Some(lower) = latin1_lowercase(c) {
            out.push(lower);
        } else {
            out.extend(c.to_lowercase());
        }
    }
}

/// The lower case of a Latin-1 letter or sign (U+0080 to U+00FF), without a table search: the
/// capitals U+00C0 to U+00DE but `×` are their small letter 0x20 further, the rest are their own
/// lower case. `None` above U+00FF. (French, Spanish or German instructions meet these often.)
fn latin1_lowercase(c: char) -> Option<char> {
    match c {
        '\u{C0}'..='\u{DE}' if c != '\u{D7}' => char::from_u32(c as u32 + 0x20),
        '\u{80}'..='\u{FF}' => Some(c),
        _ => None,
    }
}

/// ASCII bytes [`normalize_instruction`] copies as they are (lower-cased): everything but
/// whitespace, control characters, `\\` (mention escapes) and `&` (entities).
const PLAIN_ASCII: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x21;
    while b < 0x7f {
        t[b] = b != b'\\' as usize && b != b'&' as usize;
        b += 1;
    }
    t
};

/// An entity at the start of `rest` (the text after `&`): the character and the length through `;`.
fn decode_entity_at(rest: &str) -> Option<(char, usize)> {
    let end = rest.find(';').filter(|&end| end > 0 && end <= 10)?;
    decode_entity(&rest[..end]).map(|ch| (ch, end + 1))
}

fn digits(s: &str, at: usize, n: usize) -> Option<i64> {
    let part = s.get(at..at + n)?;
    if part.bytes().all(|b| b.is_ascii_digit()) {
        part.parse().ok()
    } else {
        None
    }
}

/// Milliseconds since the epoch of an ISO 8601 date-time such as `2025-01-01T10:00:00.000Z` or
/// `2025-01-01T10:00:00+02:00` (a date-time without an offset is read as UTC).
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let s = text.trim();
    let (y, mo, d) = (digits(s, 0, 4)?, digits(s, 5, 2)?, digits(s, 8, 2)?);
    if s.get(4..5)? != "-"
        || s.get(7..8)? != "-"
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let mut ms = roo_js::days_from_civil(y, mo as u32, d as u32) * 86_400_000;
    if s.len() == 10 {
        return Some(ms);
    }
    if !matches!(s.get(10..11)?, "T" | " ") || s.get(13..14)? != ":" {
        return None;
    }
    let (h, mi) = (digits(s, 11, 2)?, digits(s, 14, 2)?);
    let mut rest = &s[16..];
    let mut sec = 0;
    if let Some(r) = rest.strip_prefix(':') {
        sec = digits(r, 0, 2)?;
        rest = &r[2..];
    }
    let mut frac = 0;
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        let part = &r[..n];
        frac = part
            .get(..3)
            .map_or_else(|| format!("{part:0<3}"), str::to_owned)
            .parse()
            .ok()?;
        rest = &r[n..];
    }
    let offset_min = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let oh = digits(rest, 1, 2)?;
            let om = digits(rest, rest.len() - 2, 2)?;
            sign * (oh * 60 + om)
        }
    };
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    ms += ((h * 60 + mi - offset_min) * 60 + sec) * 1000 + frac;
    Some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn latin1_lower_case_is_unicode_lower_case() {
        for c in '\u{80}'..='\u{FF}' {
            let unicode: String = c.to_lowercase().collect();
            assert_eq!(
                latin1_lowercase(c).map(String::from),
                Some(unicode),
                "{c:?}"
            );
        }
        assert_eq!(latin1_lowercase('\u{100}'), None);
        assert_eq!(latin1_lowercase('Σ'), None);
    }

    /// The straightforward character-by-character version the fast one must agree with.
    fn normalize_reference(text: &str) -> String {
        let text = unwrap_user_text(text);
        let mut out = String::with_capacity(text.len());
        let mut pending_space = false;
        let mut chars = text.char_indices().peekable();
        let push = |out: &mut String, pending: &mut bool, c: char| {
            if c.is_whitespace() {
                *pending = !out.is_empty();
                return;
            }
            if *pending {
                out.push(' ');
                *pending = false;
            }
            for l in c.to_lowercase() {
                out.push(l);
            }
        };
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    // `\\@` and `\@` both stand for `@`.
                    let rest = &text[i..];
                    if rest.starts_with("\\\\@") {
                        chars.next();
                        chars.next();
                        push(&mut out, &mut pending_space, '@');
                    } else if rest.starts_with("\\@") {
                        chars.next();
                        push(&mut out, &mut pending_space, '@');
                    } else {
                        push(&mut out, &mut pending_space, c);
                    }
                }
                '&' => {
                    let rest = &text[i + 1..];
                    let decoded = rest
                        .find(';')
                        .filter(|&end| end > 0 && end <= 10)
                        .and_then(|end| decode_entity(&rest[..end]).map(|ch| (ch, end)));
                    match decoded {
                        Some((ch, end)) => {
                            for _ in 0..=end {
                                chars.next();
                            }
                            push(&mut out, &mut pending_space, ch);
                        }
                        None => push(&mut out, &mut pending_space, c),
                    }
                }
                _ => push(&mut out, &mut pending_space, c),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn fast_normalisation_agrees_with_the_reference(s in "(\\PC|[\\\\@&;#x0-9a-fA-F<> \\t\\n]|&amp;|&#x41;|\\\\\\\\@|<task>|</task>){0,60}") {
            prop_assert_eq!(normalize_instruction(&s), normalize_reference(&s));
        }

        #[test]
        fn unwrapping_agrees_with_the_reference(s in "( |\\n|a|b|<|>|/|task|answer|<task>|</task>|</answer>|<answer>|</ta){0,24}") {
            prop_assert_eq!(unwrap_user_text(&s), unwrap_reference(&s));
        }
    }

    /// What the user typed, by the plain definition: the text after `<tag>` up to a `</tag>` that
    /// ends the text, else up to the first `</tag>`.
    fn unwrap_reference(text: &str) -> &str {
        let trimmed = text.trim();
        for tag in USER_WRAPPERS {
            let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
            if let Some(rest) = trimmed.strip_prefix(open.as_str()) {
                if let Some(inner) = rest.strip_suffix(close.as_str()) {
                    return inner.trim();
                }
                if let Some(end) = rest.find(close.as_str()) {
                    return rest[..end].trim();
                }
            }
        }
        trimmed
    }

    #[test]
    fn unwraps_user_text() {
        assert_eq!(unwrap_user_text("<task>\nDo it\n</task>"), "Do it");
        assert_eq!(
            unwrap_user_text("<user_message>\nHi\n</user_message>"),
            "Hi"
        );
        assert_eq!(unwrap_user_text("plain "), "plain");
    }

    #[test]
    fn finds_workspace_in_both_header_eras() {
        let new = "<environment_details>\n# Current Workspace Directory (d:/dev/a (b)) Files\nx\n";
        assert_eq!(environment_workspace(new), Some("d:/dev/a (b)"));
        let old = "# Current Working Directory (/home/u/p) Files\n";
        assert_eq!(environment_workspace(old), Some("/home/u/p"));
        assert_eq!(environment_workspace("nothing"), None);
        assert_eq!(
            environment_mode("# Current Mode\n<slug>code</slug>\n<name>💻 Code</name>"),
            Some("code")
        );
    }

    #[test]
    fn xml_new_task_calls() {
        let t = "I'll delegate.\n<new_task>\n<mode>code</mode>\n<message>Write A</message>\n</new_task>\nand <new_task><mode>ask</mode><message>Q</message>";
        let calls = xml_new_tasks(t);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].mode.as_deref(), Some("code"));
        assert_eq!(calls[0].message, "Write A");
        assert_eq!(calls[1].message, "Q");
    }

    #[test]
    fn user_texts_of_an_api_turn() {
        assert_eq!(
            user_text_kind("[execute_command for 'npm test'] Result:"),
            UserTextKind::ToolResultHeader
        );
        assert_eq!(
            user_text_kind("[read_file for 'a.ts'] Result:\n1 | x"),
            UserTextKind::ToolResultHeader
        );
        assert_eq!(
            user_text_kind("[TASK RESUMPTION] This task was interrupted"),
            UserTextKind::ExtensionNote
        );
        assert_eq!(
            user_text_kind("<environment_details>\n# Time\n</environment_details>"),
            UserTextKind::Environment
        );
        assert_eq!(
            user_text_kind("[1] is the first item, fix it"),
            UserTextKind::User
        );
        assert_eq!(
            user_words_in("The user has provided feedback:\n<feedback>\nuse pnpm\n</feedback>"),
            Some("use pnpm")
        );
        assert_eq!(user_words_in("<feedback>  </feedback>"), None);
    }

    #[test]
    fn cline_plan_and_act_modes() {
        assert_eq!(
            environment_mode(
                "<environment_details>\n# Current Mode\nPLAN MODE\nIn this mode you should"
            ),
            Some("plan")
        );
        assert_eq!(
            environment_mode("# Current Mode\n\nACT MODE\n"),
            Some("act")
        );
    }

    #[test]
    fn result_headers() {
        assert_eq!(
            new_task_result_header(
                "[new_task in 💻 Code mode: 'Fix it, don't say ']' ok'] Result:"
            ),
            Some(("💻 Code", "Fix it, don't say ']' ok"))
        );
        assert_eq!(
            delegated_child_id("Delegated to child task 019a-x"),
            Some("019a-x")
        );
        assert_eq!(
            completed_subtask_id("Subtask abc completed.\n\nResult:\nok"),
            Some("abc")
        );
        assert!(is_subtask_completion("[new_task completed] Result: done"));
    }

    #[test]
    fn normalisation_removes_extension_introduced_differences() {
        let parent = "Look at \\\\@/src/a.ts &amp; fix   the\n\nbug";
        let child = "Look at \\@/src/a.ts & fix the bug";
        assert_eq!(normalize_instruction(parent), normalize_instruction(child));
        assert_eq!(
            normalize_instruction("<task>\n  HELLO&#33;\n</task>"),
            "hello!"
        );
        assert_eq!(normalize_instruction("a &unknown; b"), "a &unknown; b");
    }

    #[test]
    fn iso_dates() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            parse_iso_ms("2025-09-17T13:11:01.175Z"),
            Some(1_758_114_661_175)
        );
        assert_eq!(
            parse_iso_ms("2025-09-17T15:11:01.175+02:00"),
            Some(1_758_114_661_175)
        );
        assert_eq!(
            parse_iso_ms("2025-09-17T13:11:01Z"),
            Some(1_758_114_661_000)
        );
        assert_eq!(parse_iso_ms("2025-09-17"), Some(1_758_067_200_000));
        assert_eq!(parse_iso_ms("yesterday"), None);
        assert_eq!(parse_iso_ms("2025-13-01T00:00:00Z"), None);
    }
}
