//! Seconds in whole periods, and what a cold start requires of a startup
//! probe: the arithmetic the startup and window rules share.

/// Seconds a startup probe must allow for a cold start: `cold x (100 + margin) / 100`,
/// rounded up, in integers so 430 s at 10% is exactly 473 s.
pub fn cold_start_required(cold: i64, margin_percent: i64) -> i64 {
    ceil_div(cold.saturating_mul(margin_percent.saturating_add(100)), 100)
}

/// `ceil(n / d)` for `d >= 1`; 0 for `n <= 0`.
pub fn ceil_div(n: i64, d: i64) -> i64 {
    if n <= 0 || d < 1 {
        return 0;
    }
    n / d + i64::from(n % d != 0)
}
