//! Where a JSON string literal ends, found 64 bytes at a time.
//!
//! Each block of 64 bytes becomes bit masks, one bit per byte: its quotes, backslashes and control
//! characters. Which bytes are escaped follows from the backslash mask by carry arithmetic (a run
//! of backslashes escapes the byte after it when the run is odd), so an escape costs no branch of
//! its own: the texts read here hold one every dozen bytes. The literal ends at the first quote
//! that is not escaped; before it there may be no control character, and every escaped byte must
//! be one JSON allows (`" \ / b f n r t`, or `u` with four hex digits after it), which is what
//! `serde_json` checks of a string it steps over.
//!
//! On x86-64 the masks come from SSE2 compares (through `safe_arch`, which every x86-64 processor
//! runs); elsewhere from 64-bit word arithmetic. Both give the same masks, which the tests check.

/// Bit masks of one block: bit `i` stands for byte `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    control: u64,
}

/// Even bit positions (0, 2, 4, …).
const EVEN: u64 = 0x5555_5555_5555_5555;

/// The bytes escaped by the backslashes of a block: those right after an odd run of backslashes.
/// `carry` is 1 when the block's first byte is escaped by the block before, and is set for the
/// next block.
fn escaped_bytes(backslash: u64, carry: &mut u64) -> u64 {
    // A backslash that is itself escaped starts nothing.
    let backslash = backslash & !*carry;
    let after_backslash = (backslash << 1) | *carry;
    // Runs starting on an odd bit: adding the run to its start carries past its end, leaving a
    // bit just after it; a run starting on an even bit is handled by inverting the parity.
    let odd_starts = backslash & !EVEN & !after_backslash;
    let (even_starts_sum, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    let flipped = even_starts_sum << 1;
    (EVEN ^ flipped) & after_backslash
}

/// Where the string literal whose opening quote is just before `start` ends: the index just past
/// its closing quote. `None` when it is not a literal `serde_json` would accept: cut short, with a
/// raw control character, or with an escape JSON does not have.
pub fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    scan_string(bytes, start).map(|s| s.end)
}

/// What [`scan_string`] found of a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// The index just past the closing quote.
    pub end: usize,
    /// Whether it holds any escape (else its text is the bytes between its quotes).
    pub escapes: bool,
    /// Whether it holds a `\u` escape (the only kind whose decoding can fail, on a surrogate
    /// outside a pair).
    pub unicode: bool,
}

/// [`string_end`], also telling whether the literal holds escapes.
pub fn scan_string(bytes: &[u8], start: usize) -> Option<Scanned> {
    // Most literals are short names and values: one 16-byte look ends them.
    if let Some(head) = bytes.get(start..).and_then(<[u8]>::first_chunk::<16>) {
        let masks = classify16(head);
        let stops = masks.backslash | masks.control;
        if masks.quote != 0 && stops & ((masks.quote & masks.quote.wrapping_neg()) - 1) == 0 {
            return Some(Scanned {
                end: start + masks.quote.trailing_zeros() as usize + 1,
                escapes: false,
                unicode: false,
            });
        }
    }
    let (mut escapes, mut unicode) = (false, false);
    let mut pos = start;
    let mut carry = 0u64;
    let mut padded: [u8; 64];
    loop {
        let rest = bytes.get(pos..)?;
        let (block, full) = match rest.first_chunk::<64>() {
            Some(block) => (block, true),
            None => {
                // The last bytes, padded with spaces (no quote, backslash or control character).
                padded = [b' '; 64];
                padded[..rest.len()].copy_from_slice(rest);
                (&padded, false)
            }
        };
        let masks = classify(block);
        let escaped = escaped_bytes(masks.backslash, &mut carry);
        let ends = masks.quote & !escaped;
        // The bytes before the closing quote, or the whole block when it holds none.
        let inside = if ends == 0 {
            u64::MAX
        } else {
            (ends & ends.wrapping_neg()) - 1
        };
        if masks.control & inside != 0 {
            return None;
        }
        let escaped = escaped & inside;
        if escaped != 0 {
            escapes = true;
            unicode |= escapes_allowed(block, &masks, escaped, &bytes[pos..])?;
        }
        if ends != 0 {
            return Some(Scanned {
                end: pos + ends.trailing_zeros() as usize + 1,
                escapes,
                unicode,
            });
        }
        if !full {
            return None;
        }
        pos += 64;
    }
}

/// The next backslash at or after `from`, eight bytes at a time: inside a literal, where the
/// escapes of these texts are a dozen bytes apart, too close for a vectorised search to pay for
/// its start.
pub fn find_backslash(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(word) = bytes.get(from..).and_then(<[u8]>::first_chunk::<8>) {
        let hits = words::equal(u64::from_le_bytes(*word), b'\\');
        if hits != 0 {
            return Some(from + hits.trailing_zeros() as usize / 8);
        }
        from += 8;
    }
    let tail = bytes.get(from..)?;
    tail.iter().position(|&b| b == b'\\').map(|i| from + i)
}

/// Whether every escaped byte of `block` (bits of `escaped`) makes an escape JSON allows: `None`
/// when one does not, else whether any is a `\u`. `from_block` is the text from the block's
/// first byte on, for the hex digits of `\u`.
fn escapes_allowed(
    block: &[u8; 64],
    masks: &Masks,
    escaped: u64,
    from_block: &[u8],
) -> Option<bool> {
    // Most escapes are new lines, tabs, quotes and backslashes: checked first, with two compares.
    if escaped & !(masks.quote | masks.backslash | equal_any(block, b"nt")) == 0 {
        return Some(false);
    }
    let simple = masks.quote | masks.backslash | equal_any(block, b"/bfnrt");
    let unicode = equal_any(block, b"u");
    if escaped & !(simple | unicode) != 0 {
        return None;
    }
    let unicode = escaped & unicode;
    let mut rest = unicode;
    while rest != 0 {
        let at = rest.trailing_zeros() as usize;
        let hex = from_block.get(at + 1..at + 5)?;
        if !hex.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        rest &= rest - 1;
    }
    Some(unicode != 0)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod lanes {
    use safe_arch::{
        bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, m128i, min_u8_m128i,
        move_mask_i8_m128i, set_splat_i8_m128i,
    };

    fn splat(byte: u8) -> m128i {
        set_splat_i8_m128i(byte as i8)
    }

    fn bits(v: m128i) -> u64 {
        u64::from(move_mask_i8_m128i(v) as u16)
    }

    pub(super) fn classify(block: &[u8; 64]) -> super::Masks {
        let (quote, backslash, below_space) = (splat(b'"'), splat(b'\\'), splat(0x1f));
        let mut masks = super::Masks {
            quote: 0,
            backslash: 0,
            control: 0,
        };
        let (lanes, _) = block.as_chunks::<16>();
        for (i, lane) in lanes.iter().enumerate() {
            let v = load_unaligned_m128i(lane);
            let shift = 16 * i;
            masks.quote |= bits(cmp_eq_mask_i8_m128i(v, quote)) << shift;
            masks.backslash |= bits(cmp_eq_mask_i8_m128i(v, backslash)) << shift;
            // A byte is below 0x20 when its unsigned minimum with 0x1f is itself.
            masks.control |= bits(cmp_eq_mask_i8_m128i(min_u8_m128i(v, below_space), v)) << shift;
        }
        masks
    }

    pub(super) fn classify16(lane: &[u8; 16]) -> super::Masks {
        let v = load_unaligned_m128i(lane);
        super::Masks {
            quote: bits(cmp_eq_mask_i8_m128i(v, splat(b'"'))),
            backslash: bits(cmp_eq_mask_i8_m128i(v, splat(b'\\'))),
            control: bits(cmp_eq_mask_i8_m128i(min_u8_m128i(v, splat(0x1f)), v)),
        }
    }

    #[inline(always)]
    pub(super) fn equal_any(block: &[u8; 64], set: &[u8]) -> u64 {
        let (lanes, _) = block.as_chunks::<16>();
        let mut out = 0u64;
        for (i, lane) in lanes.iter().enumerate() {
            let v = load_unaligned_m128i(lane);
            let mut hit = cmp_eq_mask_i8_m128i(v, splat(set[0]));
            for &b in &set[1..] {
                hit = bitor_m128i(hit, cmp_eq_mask_i8_m128i(v, splat(b)));
            }
            out |= bits(hit) << (16 * i);
        }
        out
    }
}

/// The masks from 64-bit word arithmetic, for every target (and, on x86-64, to check the SSE2
/// ones against).
mod words {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;

    /// The high bit of each zero byte of `x`, with no false hits from borrows.
    fn zero_bytes_exact(x: u64) -> u64 {
        !(((x & !HIGH) + !HIGH) | x | !HIGH)
    }

    /// One bit per byte from the high bits of the bytes of `m` (the others zero).
    fn gather(m: u64) -> u64 {
        ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
    }

    fn word_of(lane: &[u8; 8]) -> u64 {
        u64::from_le_bytes(*lane)
    }

    #[cfg_attr(
        all(target_arch = "x86_64", target_feature = "sse2", not(test)),
        expect(
            dead_code,
            reason = "the SIMD scanner serves this target; tests compare the two"
        )
    )]
    pub(super) fn classify(block: &[u8; 64]) -> super::Masks {
        classify_words(block.as_chunks::<8>().0)
    }

    #[cfg_attr(
        all(target_arch = "x86_64", target_feature = "sse2", not(test)),
        expect(
            dead_code,
            reason = "the SIMD scanner serves this target; tests compare the two"
        )
    )]
    pub(super) fn classify16(lane: &[u8; 16]) -> super::Masks {
        classify_words(lane.as_chunks::<8>().0)
    }

    fn classify_words(words: &[[u8; 8]]) -> super::Masks {
        let mut masks = super::Masks {
            quote: 0,
            backslash: 0,
            control: 0,
        };
        for (i, lane) in words.iter().enumerate() {
            let w = word_of(lane);
            let shift = 8 * i;
            masks.quote |= gather(zero_bytes_exact(w ^ (ONES * u64::from(b'"')))) << shift;
            masks.backslash |= gather(zero_bytes_exact(w ^ (ONES * u64::from(b'\\')))) << shift;
            // Below 0x20: the three high bits are clear.
            masks.control |= gather(zero_bytes_exact(w & (ONES * 0xe0))) << shift;
        }
        masks
    }

    #[cfg_attr(
        all(target_arch = "x86_64", target_feature = "sse2", not(test)),
        expect(
            dead_code,
            reason = "the SIMD scanner serves this target; tests compare the two"
        )
    )]
    pub(super) fn equal_any(block: &[u8; 64], set: &[u8]) -> u64 {
        let (words, _) = block.as_chunks::<8>();
        let mut out = 0u64;
        for (i, lane) in words.iter().enumerate() {
            let w = word_of(lane);
            let hit = set.iter().fold(0, |acc, &b| {
                acc | zero_bytes_exact(w ^ (ONES * u64::from(b)))
            });
            out |= gather(hit) << (8 * i);
        }
        out
    }

    /// The high bit of each byte of `word` equal to `byte`.
    pub(super) fn equal(word: u64, byte: u8) -> u64 {
        zero_bytes_exact(word ^ (ONES * u64::from(byte)))
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use lanes::{classify, classify16, equal_any};
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use words::{classify, classify16, equal_any};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The literal's end found byte by byte, as `serde_json` steps over a string.
    fn reference_end(bytes: &[u8], start: usize) -> Option<usize> {
        let mut i = start;
        loop {
            match *bytes.get(i)? {
                b'"' => return Some(i + 1),
                b'\\' => match *bytes.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        let hex = bytes.get(i + 2..i + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 6;
                    }
                    _ => return None,
                },
                0..=0x1f => return None,
                _ => i += 1,
            }
        }
    }

    /// Whether a checked literal's inside holds a `\u` escape (not a `u` after an escaped
    /// backslash).
    fn reference_has_unicode_escape(inner: &[u8]) -> bool {
        let mut i = 0;
        while i < inner.len() {
            if inner[i] == b'\\' {
                if inner.get(i + 1) == Some(&b'u') {
                    return true;
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        false
    }

    /// Texts dense in what the scanner must get right: runs of backslashes of every length,
    /// quotes, escapes good and bad, control characters, multi-byte characters, at any offset
    /// from a block boundary.
    fn arb_string_body() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            4 => "[a-z ]{0,70}".prop_map(String::into_bytes),
            2 => (1usize..9).prop_map(|n| vec![b'\\'; n]),
            1 => Just(b"\"".to_vec()),
            1 => Just(b"\\n".to_vec()),
            1 => Just(b"\\u00e9".to_vec()),
            1 => Just(b"\\u12".to_vec()),
            1 => Just(b"\\x".to_vec()),
            1 => Just(b"\n".to_vec()),
            1 => Just(b"\x7f".to_vec()),
            1 => Just("é€😀".as_bytes().to_vec()),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    #[test]
    fn ends_where_the_closing_quote_is() {
        for (text, end) in [
            (&br#""""#[..], Some(2)),
            (br#""plain" tail"#, Some(7)),
            (br#""a\"b" "#, Some(6)),
            (br#""a\\" "#, Some(5)),
            (br#""a\\\"b" "#, Some(8)),
            (br#""\u00e9" "#, Some(8)),
            (br#""\u00g9" "#, None),
            (br#""bad \x" "#, None),
            (b"\"raw\ncontrol\"", None),
            (br#""unterminated"#, None),
            (br#""ends in a backslash\"#, None),
        ] {
            assert_eq!(
                string_end(text, 1),
                end,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // Backslash runs across a block boundary, of both parities.
        for run in 1..6 {
            for at in 58..70 {
                let mut text = vec![b'"'];
                text.extend(std::iter::repeat_n(b'a', at));
                text.extend(std::iter::repeat_n(b'\\', run));
                text.extend(b"\"x\" y");
                assert_eq!(
                    string_end(&text, 1),
                    reference_end(&text, 1),
                    "run {run} at {at}"
                );
            }
        }
    }

    #[test]
    fn word_masks_are_exact() {
        for byte in [0u8, 0x1f, b'"', b'\\', 0x80, 0xff] {
            for other in [0u8, 1, 0x1f, 0x20, b'"', b'\\', 0x7f, 0x80, 0xa2, 0xff] {
                let word = u64::from_le_bytes([other, byte, other, byte, 0, byte, 0xff, other]);
                let want = (0..8).fold(0u64, |acc, i| {
                    acc | (u64::from(word.to_le_bytes()[i] == byte) << (8 * i + 7))
                });
                assert_eq!(words::equal(word, byte), want, "{byte:#x} {other:#x}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The block scanner ends a literal exactly where the byte-by-byte reference does, and
        /// refuses exactly what it refuses, from any start offset.
        #[test]
        fn agrees_with_the_reference(body in arb_string_body(), lead in 0usize..70) {
            let mut text = vec![b'x'; lead];
            text.push(b'"');
            text.extend(&body);
            text.extend(b"\" , 1");
            let scanned = scan_string(&text, lead + 1);
            prop_assert_eq!(scanned.map(|s| s.end), reference_end(&text, lead + 1));
            if let Some(s) = scanned {
                let inner = &text[lead + 1..s.end - 1];
                prop_assert_eq!(s.escapes, inner.contains(&b'\\'));
                prop_assert_eq!(s.unicode, inner.windows(2).any(|w| w == b"\\u")
                    && reference_has_unicode_escape(inner));
            }
        }

        /// Both ways of making the masks agree on any block.
        #[test]
        fn word_masks_equal_lane_masks(block in proptest::collection::vec(any::<u8>(), 64)) {
            let block: [u8; 64] = block.try_into().expect("64 bytes");
            prop_assert_eq!(words::classify(&block), classify(&block));
            let head = block.first_chunk::<16>().expect("16 bytes");
            prop_assert_eq!(words::classify16(head), classify16(head));
            prop_assert_eq!(
                words::equal_any(&block, b"/bfnrt"),
                equal_any(&block, b"/bfnrt")
            );
        }
    }
}
