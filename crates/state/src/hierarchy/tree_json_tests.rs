//! Tests of the tree's JSON text (`tree_json.rs`).
use super::plain8;

/// The rule of `Writer::string`, a byte at a time.
fn plain(b: u8, latin1: bool) -> bool {
    b >= 0x20 && b != b'"' && b != b'\\' && (b < 0x80 || !latin1)
}

#[test]
fn eight_bytes_at_a_time_is_the_rule_of_each_byte() {
    let agree = |bytes: [u8; 8]| {
        for latin1 in [false, true] {
            let want = bytes.iter().all(|&b| plain(b, latin1));
            assert_eq!(plain8(u64::from_le_bytes(bytes), latin1), want, "{bytes:?}");
        }
    };
    // Every byte value at every place among plain bytes, and beside every other value.
    for at in 0..8 {
        for b in 0..=255u8 {
            let mut w = *b"abcdefgh";
            w[at] = b;
            agree(w);
            for other in 0..=255u8 {
                let mut v = [0xe9u8; 8];
                v[at] = b;
                v[(at + 3) % 8] = other;
                agree(v);
            }
        }
    }
    // Words of any bytes (a fixed xorshift sequence).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        agree(x.to_le_bytes());
    }
}
