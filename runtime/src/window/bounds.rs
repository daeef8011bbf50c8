//! A window's time arithmetic: which records are late, which lie in a
//! record's window, and which no later record can see. Computed in `i128`,
//! so no bound overflows at `i64`'s extremes (`t - span` with `t` near
//! `i64::MIN` is simply below every time).

/// A window's span and grace, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    span: i128,
    grace: i128,
}

impl Bounds {
    pub fn new(span: i64, grace: i64) -> Bounds {
        Bounds { span: i128::from(span), grace: i128::from(grace) }
    }

    /// A record at `time` is late for a key whose latest time is `latest`:
    /// `time < latest - grace`.
    pub fn is_late(self, time: i64, latest: i64) -> bool {
        i128::from(time) < i128::from(latest) - self.grace
    }

    /// `time` lies in the window of a record at `of`: `(of - span, of]`.
    pub fn in_window(self, time: i64, of: i64) -> bool {
        time <= of && i128::from(time) > i128::from(of) - self.span
    }

    /// No record that is not late against `clock` can see a record at
    /// `time`: `time + span + grace <= clock`. Such a record's time is at
    /// least `clock - grace`, so its window starts above `clock - grace -
    /// span`, at or above `time`. With `clock` a key's latest time this
    /// prunes the key's records.
    pub fn out_of_reach(self, time: i64, clock: i64) -> bool {
        i128::from(time) + self.span + self.grace <= i128::from(clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_at_the_extremes_do_not_overflow() {
        let widest = Bounds::new(i64::MAX, i64::MAX);
        assert!(widest.in_window(i64::MIN, i64::MIN));
        assert!(!widest.in_window(0, i64::MAX), "MAX - MAX = 0 is the exclusive lower bound");
        assert!(widest.in_window(1, i64::MAX));
        assert!(widest.is_late(-1, i64::MAX) && !widest.is_late(0, i64::MAX));
        assert!(!widest.is_late(i64::MAX, i64::MIN));
        // Not late against MAX means a time of 0 or more, whose window
        // starts above -MAX = MIN + 1.
        assert!(widest.out_of_reach(i64::MIN + 1, i64::MAX) && !widest.out_of_reach(i64::MIN + 2, i64::MAX));
        let narrowest = Bounds::new(1, 0);
        assert!(
            narrowest.out_of_reach(i64::MAX - 1, i64::MAX) && !narrowest.out_of_reach(i64::MAX, i64::MAX)
        );
        assert!(narrowest.in_window(i64::MIN, i64::MIN) && !narrowest.in_window(i64::MIN, i64::MIN + 1));
    }
}
