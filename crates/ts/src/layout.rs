//! Lays out ts-rs's one-line declarations for a reader: an object type gets one field per line
//! (its JSDoc above it), and a map of JSON values flattened into a struct (serde's `flatten` on a
//! `Map<String, Value>`, the fields a reader keeps verbatim) becomes the index signature
//! `[extra: string]: unknown`.

use ts_rs::{Config, TS};

/// TypeScript requires every declared field to fit the index signature: `unknown` lets them.
const INDEX_SIGNATURE: &str = " [extra: string]: unknown, }";

/// What ts-rs writes after a struct's fields for a flattened `serde_json::Map<String, Value>`.
pub fn flattened_map(cfg: &Config) -> String {
    format!(
        " }} & {}",
        <serde_json::Map<String, serde_json::Value> as TS>::inline_flattened(cfg)
    )
}

/// `type Name = …;` as written by ts-rs, laid out; `flattened_map` is [`flattened_map`].
pub fn declaration(decl: &str, flattened_map: &str) -> String {
    let decl = decl.replace(flattened_map, INDEX_SIGNATURE);
    let Some((head, body)) = decl.split_once(" = ") else {
        return decl;
    };
    let body = body.strip_suffix(';').unwrap_or(body);
    match body.strip_prefix("{ ").and_then(|b| b.strip_suffix(" }")) {
        Some(fields) if !fields.trim().is_empty() => {
            let mut out = format!("{head} = {{\n");
            for field in split_fields(fields) {
                for line in field.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    let space = if line.starts_with('*') { "   " } else { "  " };
                    out.push_str(space);
                    out.push_str(line);
                    out.push('\n');
                }
            }
            out.push_str("};");
            out
        }
        _ => format!("{head} = {body};"),
    }
}

/// The fields of an object type's body (`a: T, b?: { c: U, }, `), each with its trailing comma,
/// split at the commas of the outer level (outside brackets, string literals and comments).
fn split_fields(body: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        match c {
            '"' | '\'' => {
                for s in chars.by_ref() {
                    current.push(s);
                    if s == c {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut last = c;
                for s in chars.by_ref() {
                    current.push(s);
                    if last == '*' && s == '/' {
                        break;
                    }
                    last = s;
                }
            }
            '{' | '[' | '(' | '<' => depth += 1,
            '}' | ']' | ')' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => fields.push(std::mem::take(&mut current)),
            _ => {}
        }
    }
    if !current.trim().is_empty() {
        fields.push(current);
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = " } & ({ [key in string]?: JsonValue })";

    #[test]
    fn one_field_a_line_with_its_docs() {
        let decl = "type A = { \n/**\n * Where, like `[1].x, y`.\n */\nfile: string, b?: { c: Array<string>, d: \"x,y\" }, };";
        assert_eq!(
            declaration(decl, MAP),
            "type A = {\n  /**\n   * Where, like `[1].x, y`.\n   */\n  file: string,\n  b?: { c: Array<string>, d: \"x,y\" },\n};"
        );
    }

    #[test]
    fn a_flattened_json_map_is_an_index_signature() {
        let decl = "type A = { a?: string, } & ({ [key in string]?: JsonValue });";
        assert_eq!(
            declaration(decl, MAP),
            "type A = {\n  a?: string,\n  [extra: string]: unknown,\n};"
        );
    }

    #[test]
    fn the_flattened_map_is_what_ts_rs_writes_for_one() {
        let map = flattened_map(&Config::new());
        assert!(map.starts_with(" } & ("), "{map}");
        assert!(map.contains("[key in string]"), "{map}");
    }

    #[test]
    fn unions_and_generics_stay_on_one_line() {
        assert_eq!(
            declaration("type S = \"a\" | \"b\";", MAP),
            "type S = \"a\" | \"b\";"
        );
        assert_eq!(
            declaration("type R<T> = { value: T, };", MAP),
            "type R<T> = {\n  value: T,\n};"
        );
    }
}
