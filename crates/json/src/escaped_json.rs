//! Reading a JSON text that is itself the value of a JSON string, without decoding the string.
//!
//! An `api_req_started` record keeps its request, usage and cost as a JSON object written into
//! `text`, so the file holds it escaped a second time: `"{\"request\":\"<task>\\nFix…\",
//! \"tokensIn\":12,…}"`. The request is most of it, and a header only needs the numbers after it.
//! [`peek_members`] walks the inner object on the outer literal's bytes, stepping over the inner
//! strings where they stand, and checks what `serde_json` would check of the decoded text.
//!
//! The outer literal must hold no `\u` escape (the scanner says so): then every backslash in it
//! starts a two-byte escape, and a run of `r` backslashes before a byte `c` decodes to `r / 2`
//! backslashes and `c` when `r` is even, to `(r - 1) / 2` backslashes and the character `\c`
//! stands for when it is odd. Anything else, or anything this reader is unsure of, is refused,
//! and the caller decodes the text and reads it the usual way.

use crate::json_cursor::MAX_NESTING;
use std::borrow::Cow;

/// A position in the inside of an outer literal (between its quotes).
struct Reader<'a> {
    /// The outer literal's inside: checked, with no `\u` escape.
    text: &'a str,
    raw: &'a [u8],
    pos: usize,
}

/// The character an outer escape `\c` stands for (`c` one of `" \ / b f n r t`).
fn outer_escape(c: u8) -> Option<u8> {
    Some(match c {
        b'"' | b'\\' | b'/' => c,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

impl<'a> Reader<'a> {
    /// The decoded byte at the position, and how many raw bytes it takes.
    fn peek(&self) -> Option<(u8, usize)> {
        match *self.raw.get(self.pos)? {
            b'\\' => Some((outer_escape(*self.raw.get(self.pos + 1)?)?, 2)),
            b => Some((b, 1)),
        }
    }

    /// Step over inner white space (which the outer escaping may have written as `\n`, `\t`,
    /// `\r`).
    fn skip_ws(&mut self) {
        while let Some((b' ' | b'\n' | b'\r' | b'\t', len)) = self.peek() {
            self.pos += len;
        }
    }

    /// Consume the decoded byte `byte` after white space.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        let (b, len) = self.peek()?;
        (b == byte).then(|| self.pos += len)
    }

    /// Step over an inner string whose opening quote is next; the raw bytes of the whole literal
    /// (quotes included, as the outer literal writes them).
    fn string(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        // The opening quote is written `\"`.
        if self.raw.get(self.pos..self.pos + 2)? != b"\\\"" {
            return None;
        }
        self.pos += 2;
        loop {
            let run_start = crate::string_scan::find_backslash(self.raw, self.pos)?;
            let run = 1 + self.raw[run_start + 1..]
                .iter()
                .take_while(|&&b| b == b'\\')
                .count();
            let after = run_start + run;
            let c = *self.raw.get(after)?;
            // Decoded: `backslashes` backslashes, then `x`.
            let (backslashes, x) = if run % 2 == 0 {
                (run / 2, c)
            } else {
                ((run - 1) / 2, outer_escape(c)?)
            };
            let escaped = backslashes % 2 == 1;
            self.pos = after + 1;
            match x {
                b'"' if !escaped => return self.text.get(start..self.pos),
                // A raw control character in the inner string, escaped or not: not JSON.
                0..=0x1f => return None,
                _ if !escaped => {}
                b'"' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.raw.get(self.pos..self.pos + 4)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.pos += 4;
                }
                // `\\` pairs were counted in the run; any other escaped byte is not JSON.
                _ => return None,
            }
        }
    }

    /// Step over an inner number, literal, string, or nested value; its raw bytes.
    fn value(&mut self, depth: usize) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let (b, _) = self.peek()?;
        match b {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let inner = depth.checked_sub(1)?;
                let close = if b == b'{' { b'}' } else { b']' };
                self.eat(b)?;
                self.skip_ws();
                if self.peek()?.0 == close {
                    self.eat(close)?;
                } else {
                    loop {
                        if b == b'{' {
                            self.string()?;
                            self.eat(b':')?;
                        }
                        self.value(inner)?;
                        self.skip_ws();
                        match self.peek()?.0 {
                            b',' => self.eat(b',')?,
                            x if x == close => {
                                self.eat(close)?;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
            }
            _ => {
                // A number or literal: plain bytes, checked by serde_json's grammar.
                let len = self.raw[self.pos..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
                    .count();
                let token = self.text.get(self.pos..self.pos + len)?;
                serde_json::from_str::<serde::de::IgnoredAny>(token).ok()?;
                self.pos += len;
            }
        }
        self.text.get(start..self.pos)
    }

    /// The decoded name of a member (a name with an escape is refused).
    fn name(&mut self) -> Option<&'a str> {
        let raw = self.string()?;
        let inner = raw.strip_prefix("\\\"")?.strip_suffix("\\\"")?;
        (!inner.contains('\\')).then_some(inner)
    }
}

/// The members `names` of the JSON object that the string literal `literal` holds, each as the
/// inner JSON text of its value (decoded, so it reads as plain JSON), without decoding the rest.
/// `None` when the literal holds a `\u` escape (`has_unicode_escape`), when the inner text is not
/// exactly one object `serde_json` would read, names one of `names` twice, or nests deeper than
/// the usual reading: the caller then decodes the literal and reads it the usual way.
///
/// `literal` must be one [`crate::string_scan::scan_string`] accepted whole (no control
/// character, only escapes JSON allows), and `has_unicode_escape` what it said of it: this reader
/// relies on both and does not check them again.
pub fn peek_members<'a, const N: usize>(
    literal: &'a str,
    has_unicode_escape: bool,
    names: [&str; N],
) -> Option<[Option<Cow<'a, str>>; N]> {
    if has_unicode_escape {
        return None;
    }
    let inside = literal.strip_prefix('"')?.strip_suffix('"')?;
    let mut r = Reader {
        text: inside,
        raw: inside.as_bytes(),
        pos: 0,
    };
    let mut found: [Option<&'a str>; N] = [None; N];
    r.eat(b'{')?;
    r.skip_ws();
    if r.peek()?.0 == b'}' {
        r.eat(b'}')?;
    } else {
        loop {
            let name = r.name()?;
            r.eat(b':')?;
            let value = r.value(MAX_NESTING - 1)?;
            if let Some(i) = names.iter().position(|n| *n == name) {
                if found[i].replace(value).is_some() {
                    return None;
                }
            }
            r.skip_ws();
            match r.peek()?.0 {
                b',' => r.eat(b',')?,
                b'}' => {
                    r.eat(b'}')?;
                    break;
                }
                _ => return None,
            }
        }
    }
    r.skip_ws();
    if r.pos != r.raw.len() {
        return None;
    }
    // The values found, decoded from the outer escaping into plain inner JSON.
    let mut out: [Option<Cow<'a, str>>; N] = std::array::from_fn(|_| None);
    for (slot, raw) in out.iter_mut().zip(found) {
        if let Some(raw) = raw {
            *slot = Some(if raw.contains('\\') {
                Cow::Owned(crate::json_cursor::decode_literal(&format!("\"{raw}\""))?.into_owned())
            } else {
                Cow::Borrowed(raw)
            });
        }
    }
    Some(out)
}
