//! A tiny seeded PRNG (SplitMix64). Deterministic across platforms; not cryptographic.

/// SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        let mut r = Rng(seed ^ 0x6A09_E667_F3BC_C908);
        r.next_u64();
        r
    }

    /// An independent stream for `(seed, stream)`: used to give every task its own generator so that
    /// parallel generation stays deterministic.
    pub fn derive(seed: u64, stream: u64) -> Self {
        let mut a = Rng::new(seed);
        let base = a.next_u64();
        Rng::new(base ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03).rotate_left(17))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            lo + self.below(hi - lo)
        }
    }

    /// Uniform `usize` in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            lo
        } else {
            lo + self.below((hi - lo + 1) as u64) as usize
        }
    }

    /// Uniform in `[0, 1)`.
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// A random element, by value (panics on an empty slice, which callers never pass).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// A random element, by reference (panics on an empty slice, which callers never pass).
    pub fn pick_ref<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Index chosen with the given weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        let mut x = self.below(total.max(1));
        for (i, w) in weights.iter().enumerate() {
            let w = u64::from(*w);
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len().saturating_sub(1)
    }

    /// Log-uniform in `[lo, hi]`.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.f64() * (hi.ln() - lo.ln())).exp()
    }

    /// `n` lowercase hex digits.
    pub fn hex(&mut self, n: usize) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(n);
        let mut bits = 0u64;
        for i in 0..n {
            if i % 16 == 0 {
                bits = self.next_u64();
            }
            s.push(HEX[(bits & 15) as usize] as char);
            bits >>= 4;
        }
        s
    }

    /// `n` characters of base62 (tool call ids).
    pub fn base62(&mut self, n: usize) -> String {
        const A: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        (0..n).map(|_| A[self.below(62) as usize] as char).collect()
    }

    /// `n` characters of base64 (thinking signatures, encrypted reasoning).
    pub fn base64(&mut self, n: usize) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..n).map(|_| A[self.below(64) as usize] as char).collect()
    }

    /// A UUID v4 string.
    pub fn uuid_v4(&mut self) -> String {
        let h = self.hex(32);
        let variant = ['8', '9', 'a', 'b'][self.below(4) as usize];
        format!(
            "{}-{}-4{}-{}{}-{}",
            &h[0..8],
            &h[8..12],
            &h[13..16],
            variant,
            &h[17..20],
            &h[20..32]
        )
    }

    /// A UUID v7 string for the given unix time in ms.
    pub fn uuid_v7(&mut self, ms: u64) -> String {
        let t = format!("{:012x}", ms & 0xFFFF_FFFF_FFFF);
        let h = self.hex(20);
        let variant = ['8', '9', 'a', 'b'][self.below(4) as usize];
        format!(
            "{}-{}-7{}-{}{}-{}",
            &t[0..8],
            &t[8..12],
            &h[0..3],
            variant,
            &h[3..6],
            &h[6..18]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::derive(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::derive(7, 1).next_u64(), Rng::derive(7, 2).next_u64());
        let mut r = Rng::new(1);
        let id = r.uuid_v7(1_760_000_000_000);
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7");
        assert!(id.starts_with("0199"));
        assert_eq!(r.uuid_v4().len(), 36);
    }
}
