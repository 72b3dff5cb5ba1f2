//! A hasher for maps whose keys the program makes itself (normalised instructions, name
//! addresses), where std's SipHash, built to resist keys chosen by an attacker, would cost more
//! than the lookup it serves: one multiply per 64-bit word, as rustc's `FxHasher`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher: a word at a time, rotate, xor, multiply.
#[derive(Default, Clone, Copy)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let (words, rest) = bytes.as_chunks::<8>();
        for word in words {
            self.write_u64(u64::from_le_bytes(*word));
        }
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` hashed by [`WordHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_that_differ_hash_apart() {
        let hash = |s: &str| {
            let mut h = WordHasher::default();
            h.write(s.as_bytes());
            h.finish()
        };
        // The tail's length is part of the hash: a text and the same text with NULs after it.
        assert_ne!(hash("abc"), hash("abc\0"));
        assert_ne!(hash("abcdefgh"), hash("abcdefgh\0"));
        assert_ne!(hash(""), hash("\0"));
        let mut map: FastMap<String, usize> = FastMap::default();
        for i in 0..1000 {
            map.insert(format!("instruction {i}"), i);
        }
        assert!((0..1000).all(|i| map.get(&format!("instruction {i}")) == Some(&i)));
    }

    /// Two texts of one length with one hash, made by choosing the second's first two words so
    /// that the state after them is the first's. `__tests__/conversion.test.ts` scans tasks
    /// holding both, to check that the binding, which shares long strings found by length and
    /// hash, still gives each its own text: if the hasher changes, make a new pair.
    #[test]
    fn the_binding_tests_collision_pair_collides() {
        let pair: serde_json::Value = serde_json::from_str(include_str!(
            "../../../__tests__/golden/word-hash-collision.json"
        ))
        .expect("the pair file is JSON");
        let text = |i: usize| pair[i].as_str().expect("two strings").as_bytes();
        let hash = |b: &[u8]| {
            let mut h = WordHasher::default();
            h.write(b);
            h.finish()
        };
        assert_ne!(text(0), text(1));
        assert_eq!(text(0).len(), text(1).len());
        assert!(text(0).len() > 96, "long enough to be shared by content");
        assert_eq!(hash(text(0)), hash(text(1)));
    }
}
