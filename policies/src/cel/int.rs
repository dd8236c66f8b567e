//! Integer arithmetic in CEL as the rules compute it, for the fixes' values.

/// The largest value of an API int32 field: a fix that would pass it is
/// not made.
pub(crate) const I32_MAX: i64 = i32::MAX as i64;

/// `ceil(n / d)` for a constant `d`, as the rules compute it: 0 for `n <= 0`
/// or `d < 1`. `[n].map(x, ...)[0]` binds `x` to `n`, which is written once.
pub(crate) fn ceil_div_by(n: &str, d: i64) -> String {
    if d < 1 {
        return "0".to_owned();
    }
    format!("[int({n})].map(x, x <= 0 ? 0 : (x + {}) / {d})[0]", d - 1)
}

/// `ceil(n / d)` of a constant `n` by `d`, a CEL int of 1 or more.
pub(crate) fn ceil_div_of(n: i64, d: &str) -> String {
    if n <= 0 {
        return "0".to_owned();
    }
    format!("(({n} + {d} - 1) / {d})")
}

/// The largest of CEL ints (each written once).
pub(crate) fn max(values: &[&str]) -> String {
    let ints: Vec<String> = values.iter().map(|v| format!("int({v})")).collect();
    format!("[{}].max()", ints.join(", "))
}
