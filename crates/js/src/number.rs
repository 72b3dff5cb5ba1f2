//! Numbers as JavaScript holds and prints them.

/// `Number.prototype.toString()` (radix 10) of a double: the shortest digits that read back as the
/// same double, without exponent from 1e-6 up to below 1e21 (`0.000001`, `100000000000000000000`)
/// and with one outside it (`1e-7`, `1e+21`, `1.5e-300`); `-0` prints as `0`, and the non-finite
/// values as `NaN`, `Infinity`, `-Infinity`.
pub fn number_to_string(x: f64) -> String {
    let mut buf = ryu_js::Buffer::new();
    buf.format(x).to_owned()
}

/// The double a JSON number denotes (`JSON.parse` always yields one): integers past 2^53 round to
/// the nearest double.
pub fn number_value(n: &serde_json::Number) -> f64 {
    if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else {
        n.as_f64().unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edge_values_print_as_in_javascript() {
        // Each right-hand side is what `String(x)` gives in Node.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (100.0, "100"),
            (123.456, "123.456"),
            (123456789.0, "123456789"),
            (1758115714892.0, "1758115714892"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1.2345e25, "1.2345e+25"),
            (0.000001, "0.000001"),
            (0.0000015, "0.0000015"),
            (1e-7, "1e-7"),
            (1.2345e-7, "1.2345e-7"),
            (123e-20, "1.23e-18"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (-5e-324, "-5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (9007199254740991.0, "9007199254740991"),
            (9007199254740992.0, "9007199254740992"),
            (9007199254740993.0, "9007199254740992"),
            (18446744073709551615.0, "18446744073709552000"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for &(x, want) in cases {
            assert_eq!(number_to_string(x), want, "{x:e}");
        }
    }

    #[test]
    fn json_numbers_are_doubles() {
        let n = |s: &str| serde_json::from_str::<serde_json::Number>(s).expect("a number");
        assert_eq!(number_value(&n("12")), 12.0);
        assert_eq!(number_value(&n("-12")), -12.0);
        assert_eq!(number_value(&n("1.5")), 1.5);
        assert_eq!(
            number_value(&n("18446744073709551615")),
            18446744073709551615.0
        );
    }

    /// ECMAScript Number::toString spelled out over Rust's shortest round-trip digits (`{:e}`), the
    /// reference the ryu-js output is held to.
    fn reference(x: f64) -> String {
        if x.is_nan() || x.is_infinite() || x == 0.0 {
            return number_to_string(x);
        }
        if x < 0.0 {
            return format!("-{}", reference(-x));
        }
        let sci = format!("{x:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let n = exp.parse::<i64>().unwrap_or(0) + 1;
        let (digits, n) = even_on_tie(x, digits, n);
        let k = digits.len() as i64;
        if k <= n && n <= 21 {
            format!("{digits}{}", "0".repeat((n - k) as usize))
        } else if 0 < n && n <= 21 {
            format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
        } else if -6 < n && n <= 0 {
            format!("0.{}{digits}", "0".repeat((-n) as usize))
        } else {
            let e = n - 1;
            let sign = if e < 0 { '-' } else { '+' };
            let rest = if k > 1 {
                format!(".{}", &digits[1..])
            } else {
                String::new()
            };
            format!("{}{rest}e{sign}{}", &digits[..1], e.abs())
        }
    }

    /// When `x` lies exactly halfway between two shortest candidates, ECMAScript takes the even one
    /// (Number::toString: "if there are two such possible values of s, choose the one that is
    /// even"), where Rust's shortest digits may take the other.
    fn even_on_tie(x: f64, digits: String, n: i64) -> (String, i64) {
        // The exact decimal value of `x`: a tie has at most 18 significant digits.
        let exact = format!("{x:.80e}");
        let (mantissa, exp) = exact.split_once('e').unwrap_or((exact.as_str(), "0"));
        let all: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let k = digits.len();
        let exact_n = exp.parse::<i64>().unwrap_or(0) + 1;
        let tail = &all[k.min(all.len())..];
        let tie = exact_n == n && tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0');
        if !tie {
            return (digits, n);
        }
        // The two candidates are the exact value's first k digits and that plus one.
        let low = &all[..k];
        if low.bytes().last().is_some_and(|d| (d - b'0') % 2 == 0) {
            return (low.trim_end_matches('0').to_owned(), n);
        }
        let mut up: Vec<u8> = low.bytes().collect();
        let mut i = up.len();
        loop {
            if i == 0 {
                up.insert(0, b'1');
                return (
                    String::from_utf8_lossy(&up)
                        .trim_end_matches('0')
                        .to_owned(),
                    n + 1,
                );
            }
            i -= 1;
            if up[i] == b'9' {
                up[i] = b'0';
            } else {
                up[i] += 1;
                break;
            }
        }
        (
            String::from_utf8_lossy(&up)
                .trim_end_matches('0')
                .to_owned(),
            n,
        )
    }

    #[test]
    fn a_tie_between_two_shortest_forms_prints_the_even_one() {
        // Exactly 1324104393718684.25: .2 and .3 both read back; JavaScript prints .2.
        let x = f64::from_bits(4833155218116046449);
        assert_eq!(number_to_string(x), "1324104393718684.2");
        assert_eq!(reference(x), "1324104393718684.2");
    }

    proptest! {
        #[test]
        fn any_double_prints_as_the_reference(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assert_eq!(number_to_string(x), reference(x));
        }

        #[test]
        fn printed_numbers_read_back(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            let back: f64 = number_to_string(x).parse().expect("a number");
            prop_assert!(back == x);
        }

        #[test]
        fn integers_up_to_2_53_print_plainly(i in -(1i64 << 53)..=(1i64 << 53)) {
            prop_assert_eq!(number_to_string(i as f64), i.to_string());
        }
    }
}
