//! A value converted both by the result writer and by napi's own serde conversion, for the
//! tests of the writer (`__tests__/conversion.test.ts`): they need a live JavaScript engine, so
//! the comparison is made there. The value covers what the writer does differently or keeps
//! (numbers at every edge, strings with NUL, astral characters and lengths on both sides of the
//! long-string cache, nesting, objects of many shapes met past the count at which a shape is
//! compiled, strings repeated under one field past the trial of the field cache).

// Only JavaScript calls `conversionSample`; in the Rust unit tests nothing does.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::Object;
use napi::Env;
use napi_derive::napi;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Sample {
    numbers: Vec<Numbers>,
    texts: Vec<Texts>,
    tasks: Vec<Task>,
    nested: Vec<Vec<Option<Vec<u64>>>>,
    kinds: Vec<Kind>,
    counts: BTreeMap<String, u64>,
    pair: (u8, String, f64),
    nothing: (),
    bytes: Vec<u8>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Numbers {
    byte: u8,
    short: i16,
    small_signed: i32,
    small_unsigned: u32,
    signed: i64,
    unsigned: u64,
    wide_signed: i128,
    wide_unsigned: u128,
    single: f32,
    double: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Texts {
    short: String,
    long: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<String>,
    letter: char,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Task {
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_id: Option<String>,
    mode: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    children: Vec<Task>,
    done: bool,
}

#[derive(Serialize)]
enum Kind {
    Plain,
    Named(String),
}

/// A small deterministic generator (xorshift), so a failing seed can be replayed.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
}

const EDGE_U64: [u64; 8] = [
    0,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    (1 << 53) - 1,
    1 << 53,
    (1 << 53) + 1,
    u64::MAX - 1,
    u64::MAX,
];
const EDGE_I64: [i64; 6] = [
    i32::MIN as i64 - 1,
    i64::MIN,
    i64::MAX,
    -(1 << 53) - 1,
    -1,
    0,
];
const EDGE_F64: [f64; 10] = [
    -0.0,
    0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN_POSITIVE,
    5e-324,
    0.1,
    -1e21,
];
const PIECES: [&str; 8] = ["a", "é", "😀", "\0", "\u{2028}", "\"", "\\", "\u{FFFF}"];

fn text(draw: &mut Draw, len: usize) -> String {
    (0..len).map(|_| draw.pick(&PIECES)).collect()
}

fn numbers(draw: &mut Draw) -> Numbers {
    let r = draw.next();
    Numbers {
        byte: r as u8,
        short: r as i16,
        small_signed: r as i32,
        small_unsigned: r as u32,
        signed: if r.is_multiple_of(2) {
            draw.pick(&EDGE_I64)
        } else {
            r as i64
        },
        unsigned: if r.is_multiple_of(3) {
            r
        } else {
            draw.pick(&EDGE_U64)
        },
        wide_signed: i128::from(r as i64) * i128::from(draw.next()),
        wide_unsigned: u128::from(r) << (r % 70),
        single: f32::from_bits(draw.next() as u32),
        double: if r.is_multiple_of(2) {
            draw.pick(&EDGE_F64)
        } else {
            f64::from_bits(draw.next())
        },
    }
}

fn task(draw: &mut Draw, depth: u32) -> Task {
    let r = draw.next();
    Task {
        id: format!("task-{}", r % 1000),
        parent_id: (r.is_multiple_of(3)).then(|| format!("task-{}", r % 7)),
        mode: ["code", "ask", "architect"][(r % 3) as usize].to_owned(),
        tags: (0..r % 3).map(|i| format!("tag{i}")).collect(),
        children: if depth < 3 && r.is_multiple_of(4) {
            (0..r % 3).map(|_| task(draw, depth + 1)).collect()
        } else {
            Vec::new()
        },
        done: r.is_multiple_of(2),
    }
}

fn sample(seed: u32) -> Sample {
    let mut draw = Draw(u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // Long texts repeat (the long-string cache shares them), some differ by one character only.
    let longs: Vec<String> = (0..4)
        .map(|i| format!("{}{i}", text(&mut draw, 40 + 20 * i)))
        .collect();
    // Every edge value once, then drawn ones.
    let mut numbers: Vec<Numbers> = (0..EDGE_F64.len())
        .map(|i| Numbers {
            double: EDGE_F64[i],
            unsigned: EDGE_U64[i % EDGE_U64.len()],
            signed: EDGE_I64[i % EDGE_I64.len()],
            ..self::numbers(&mut draw)
        })
        .collect();
    numbers.extend((0..64).map(|_| self::numbers(&mut draw)));
    Sample {
        numbers,
        texts: (0..400)
            .map(|i: u32| {
                let r = draw.next();
                Texts {
                    short: if i.is_multiple_of(2) {
                        text(&mut draw, 3)
                    } else {
                        format!("t{}", r % 5)
                    },
                    long: longs[(r % 4) as usize].clone(),
                    extra: (r.is_multiple_of(5)).then(|| text(&mut draw, (r % 200) as usize)),
                    letter: draw.pick(&['x', '😀', '\0', 'é']),
                }
            })
            .collect(),
        tasks: (0..120).map(|_| task(&mut draw, 0)).collect(),
        nested: (0..6)
            .map(|i: u32| {
                (0..i)
                    .map(|j: u32| {
                        j.is_multiple_of(2)
                            .then(|| (0..j).map(|_| draw.next() >> 40).collect())
                    })
                    .collect()
            })
            .collect(),
        kinds: (0..10)
            .map(|i: u32| {
                if i.is_multiple_of(2) {
                    Kind::Plain
                } else {
                    Kind::Named(format!("k{i}"))
                }
            })
            .collect(),
        counts: (0..5)
            .map(|i| (format!("key{i}"), draw.next() >> 20))
            .collect(),
        pair: (7, "pair".to_owned(), -0.0),
        nothing: (),
        bytes: vec![0, 1, 255],
    }
}

/// The same sample value for `seed`, written by the result writer (`writer`) and by napi's serde
/// conversion (`serde`).
#[napi(
    catch_unwind,
    js_name = "conversionSample",
    ts_return_type = "{ writer: unknown; serde: unknown }"
)]
pub fn conversion_sample(env: &Env, seed: u32) -> napi::Result<Object<'_>> {
    let value = sample(seed);
    let mut out = Object::new(env)?;
    out.set("writer", crate::to_js(env, &value)?)?;
    out.set("serde", env.to_js_value(&value)?)?;
    Ok(out)
}
