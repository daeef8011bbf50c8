//! Decimal fast paths: the common case (a mantissa that fits an `i64`) done
//! with machine integers, and everything else handed to rust_decimal; and
//! a decimal's text. A leaf that the slots (`data`), values and
//! `semantics` share, so it imports none of them but `data`'s packing.
//!
//! Every function returns exactly what rust_decimal returns, scale and sign
//! included; `tests` checks that on random operands. The JIT inlines the
//! same arithmetic, which is why the rules live here, spelled out.

use std::cmp::Ordering;

use rust_decimal::Decimal;

/// Powers of ten that fit an `i64`.
const POW10: [i64; 19] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
];

/// A decimal as `mantissa / 10^scale` when the mantissa fits an `i64`.
#[inline]
pub fn small(d: Decimal) -> Option<(i64, u32)> {
    let m = d.mantissa();
    i64::try_from(m).ok().map(|m| (m, d.scale()))
}

/// Builds `mantissa / 10^scale` (scale at most 28), as `Decimal::new`
/// does, from the parts and in line.
#[inline]
fn make(mantissa: i64, scale: u32) -> Decimal {
    let magnitude = mantissa.unsigned_abs();
    Decimal::from_parts(magnitude as u32, (magnitude >> 32) as u32, 0, mantissa < 0, scale)
}

/// `a` brought to scale `to` (greater than its own), if it fits.
#[inline]
fn rescale_up(m: i64, from: u32, to: u32) -> Option<i64> {
    let factor = *POW10.get((to - from) as usize)?;
    m.checked_mul(factor)
}

/// Both operands at the larger scale.
#[inline]
fn aligned(a: (i64, u32), b: (i64, u32)) -> Option<(i64, i64, u32)> {
    match a.1.cmp(&b.1) {
        Ordering::Equal => Some((a.0, b.0, a.1)),
        Ordering::Less => Some((rescale_up(a.0, a.1, b.1)?, b.0, b.1)),
        Ordering::Greater => Some((a.0, rescale_up(b.0, b.1, a.1)?, a.1)),
    }
}

/// Both operands small and non-zero. rust_decimal treats a zero operand
/// specially (`1 + 0.00` is `1`, keeping the other operand's scale), and
/// a zero result's sign; those cases take its own path.
#[inline]
fn small_nonzero(a: Decimal, b: Decimal) -> Option<((i64, u32), (i64, u32))> {
    let (x, y) = (small(a)?, small(b)?);
    (x.0 != 0 && y.0 != 0).then_some((x, y))
}

/// `a + b`; `None` on overflow (as rust_decimal's `checked_add`).
pub fn add(a: Decimal, b: Decimal) -> Option<Decimal> {
    if let Some((x, y)) = small_nonzero(a, b)
        && let Some((l, r, scale)) = aligned(x, y)
        && let Some(sum) = l.checked_add(r)
        && sum != 0
    {
        return Some(make(sum, scale));
    }
    a.checked_add(b)
}

/// `a - b`.
pub fn sub(a: Decimal, b: Decimal) -> Option<Decimal> {
    if let Some((x, y)) = small_nonzero(a, b)
        && let Some((l, r, scale)) = aligned(x, y)
        && let Some(diff) = l.checked_sub(r)
        && diff != 0
    {
        return Some(make(diff, scale));
    }
    a.checked_sub(b)
}

/// `a * b`.
pub fn mul(a: Decimal, b: Decimal) -> Option<Decimal> {
    if let Some(((x, sx), (y, sy))) = small_nonzero(a, b)
        && sx + sy <= 28
        && let Some(product) = x.checked_mul(y)
        && product != 0
    {
        return Some(make(product, sx + sy));
    }
    a.checked_mul(b)
}

/// Orders two decimals by value.
pub fn cmp(a: Decimal, b: Decimal) -> Ordering {
    if let (Some(x), Some(y)) = (small(a), small(b))
        && let Some((l, r, _)) = aligned(x, y)
    {
        return l.cmp(&r);
    }
    a.cmp(&b)
}

/// Where a value exactly halfway between two roundings goes.
#[repr(u64)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Midpoint {
    /// `round`: away from zero (2.5 to 3, -2.5 to -3).
    AwayFromZero = 0,
    /// `round_half_even`: to the even neighbour (2.5 to 2, 3.5 to 4).
    ToEven = 1,
    /// `round_half_down`: toward zero (2.5 to 2, -2.5 to -2).
    TowardZero = 2,
}

impl Midpoint {
    /// The rounding of a built-in, if it rounds.
    pub fn of(func: ir::Builtin) -> Option<Midpoint> {
        match func {
            ir::Builtin::Round => Some(Midpoint::AwayFromZero),
            ir::Builtin::RoundHalfEven => Some(Midpoint::ToEven),
            ir::Builtin::RoundHalfDown => Some(Midpoint::TowardZero),
            _ => None,
        }
    }

    /// The midpoint a helper received as a word (`self as u64`).
    pub fn from_word(word: u64) -> Option<Midpoint> {
        [Midpoint::AwayFromZero, Midpoint::ToEven, Midpoint::TowardZero]
            .into_iter()
            .find(|m| *m as u64 == word)
    }
}

/// Rounds to `places`, a midpoint as `midpoint` says, and gives exactly
/// that scale.
pub fn round(a: Decimal, places: u32, midpoint: Midpoint) -> Decimal {
    if let Some((m, scale)) = small(a) {
        if scale <= places {
            if let Some(m) = rescale_up(m, scale, places) {
                return make(m, places);
            }
        } else if let Some(&factor) = POW10.get((scale - places) as usize) {
            let (q, r) = (m / factor, m % factor);
            let twice = r.unsigned_abs() * 2;
            let up = match twice.cmp(&factor.unsigned_abs()) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => match midpoint {
                    Midpoint::AwayFromZero => true,
                    Midpoint::ToEven => q % 2 != 0,
                    Midpoint::TowardZero => false,
                },
            };
            let q = if up { q + m.signum() } else { q };
            if q != 0 || m >= 0 {
                return make(q, places);
            }
        }
    }
    slow_round(a, places, midpoint)
}

fn slow_round(a: Decimal, places: u32, midpoint: Midpoint) -> Decimal {
    use rust_decimal::RoundingStrategy;
    let strategy = match midpoint {
        Midpoint::AwayFromZero => RoundingStrategy::MidpointAwayFromZero,
        Midpoint::ToEven => RoundingStrategy::MidpointNearestEven,
        Midpoint::TowardZero => RoundingStrategy::MidpointTowardZero,
    };
    let mut rounded = a.round_dp_with_strategy(places, strategy);
    if rounded.scale() < places {
        rounded.rescale(places);
    }
    rounded
}

/// Appends a decimal with its scale, as rust_decimal's `Display` does; a
/// zero is never shown negative.
pub fn write(d: Decimal, out: &mut String) {
    let Some((m, scale)) = small(d) else {
        use std::fmt::Write as _;
        let shown = if d.is_zero() { d.abs() } else { d };
        let _ = write!(out, "{shown}");
        return;
    };
    write_small(m < 0, m.unsigned_abs(), scale, out);
}

/// [`write`] for a decimal in the two words of a slot
/// ([`crate::value::data::pack_decimal`]), without rebuilding the `Decimal` when
/// its mantissa fits an `i64`.
pub fn write_words(a: u64, b: u64, out: &mut String) {
    if b as u32 == 0 && a <= i64::MAX as u64 {
        let negative = b >> 63 == 1 && a != 0;
        write_small(negative, a, ((b >> 48) & 0xFF) as u32, out);
    } else {
        write(crate::value::data::unpack_decimal(a, b), out);
    }
}

/// Appends `magnitude / 10^scale`, with a minus sign when `negative`.
fn write_small(negative: bool, magnitude: u64, scale: u32, out: &mut String) {
    if negative {
        out.push('-');
    }
    let mut digits = itoa::Buffer::new();
    let text = digits.format(magnitude);
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(text);
    } else if text.len() > scale {
        let (whole, fraction) = text.split_at(text.len() - scale);
        out.push_str(whole);
        out.push('.');
        out.push_str(fraction);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', scale - text.len()));
        out.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decimal() -> impl Strategy<Value = Decimal> {
        prop_oneof![
            (any::<i64>(), 0u32..=28).prop_map(|(m, s)| Decimal::new(m, s)),
            (-100_000i64..100_000, 0u32..=6).prop_map(|(m, s)| Decimal::new(m, s)),
            (any::<i128>(), 0u32..=28).prop_filter_map("fits", |(m, s)| Decimal::try_from_i128_with_scale(
                m >> 32,
                s
            )
            .ok()),
            Just(Decimal::ZERO),
            Just(Decimal::new(-0, 2)),
        ]
    }

    fn same(fast: Option<Decimal>, exact: Option<Decimal>) -> bool {
        match (fast, exact) {
            (Some(f), Some(e)) => {
                f.to_string() == e.to_string() && f.is_sign_negative() == e.is_sign_negative()
            }
            (None, None) => true,
            _ => false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn fast_paths_equal_rust_decimal(a in decimal(), b in decimal(), places in 0u32..=28, midpoint in 0u64..3) {
            let midpoint = Midpoint::from_word(midpoint).unwrap();
            prop_assert!(same(add(a, b), a.checked_add(b)), "{a} + {b}");
            prop_assert!(same(sub(a, b), a.checked_sub(b)), "{a} - {b}");
            prop_assert!(same(mul(a, b), a.checked_mul(b)), "{a} * {b}");
            prop_assert_eq!(cmp(a, b), a.cmp(&b), "{} cmp {}", a, b);
            prop_assert!(same(Some(round(a, places, midpoint)), Some(slow_round(a, places, midpoint))), "round({a}, {places}, {midpoint:?})");
            let mut shown = String::new();
            write(a, &mut shown);
            let expected = if a.is_zero() { a.abs().to_string() } else { a.to_string() };
            prop_assert_eq!(&shown, &expected);
            let (low, high) = crate::value::data::pack_decimal(a);
            let mut from_words = String::new();
            write_words(low, high, &mut from_words);
            prop_assert_eq!(from_words, expected);
        }
    }
}
