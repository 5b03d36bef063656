//! Numbers printed the way C++ iostreams print them (`%g`, six significant
//! digits), because GUIs and scripts parse KataGo's output and some compare
//! it textually (`get_komi` answers `7.5`, `kata-analyze` prints `0.480018`).

/// Formats `x` like a default C++ `ostream << double`: `%g` with six
/// significant digits, trailing zeros dropped. With `showpoint` it is `%#g`
/// instead (trailing zeros and the decimal point kept), which is what
/// KataGo's Sabaki-flavoured `analyze` command prints.
pub fn format_g(x: f64, showpoint: bool) -> String {
    const PRECISION: usize = 6;
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if x == 0.0 {
        let sign = if x.is_sign_negative() { "-" } else { "" };
        return if showpoint {
            format!("{sign}0.{}", "0".repeat(PRECISION - 1))
        } else {
            format!("{sign}0")
        };
    }
    // The decimal exponent after rounding to PRECISION significant digits
    // decides between fixed and scientific notation, exactly as %g does.
    let sci = format!("{:.*e}", PRECISION - 1, x);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().unwrap_or(0)),
        None => (sci.clone(), 0),
    };
    if exp < -4 || exp >= PRECISION as i32 {
        let mantissa = if showpoint {
            mantissa
        } else {
            strip_zeros(&mantissa)
        };
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = (PRECISION as i32 - 1 - exp).max(0) as usize;
        let fixed = format!("{:.*}", decimals, x);
        if showpoint {
            if fixed.contains('.') {
                fixed
            } else {
                format!("{fixed}.")
            }
        } else {
            strip_zeros(&fixed)
        }
    }
}

/// `1.50000` -> `1.5`, `2.00000` -> `2`; numbers without a point are kept.
fn strip_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Parses a float the way KataGo's `tryStringToDouble` accepts it: a plain
/// decimal number (no `inf`, `nan` or hex), surrounding whitespace ignored.
pub fn parse_finite_f64(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty()
        || !t
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses a (possibly signed) integer; whitespace around it is ignored.
pub fn parse_i64(s: &str) -> Option<i64> {
    s.trim().parse::<i64>().ok()
}

/// `true` / `false` in any case, as KataGo's `tryStringToBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cpp_default_stream_output() {
        let cases: &[(f64, &str)] = &[
            (7.5, "7.5"),
            (0.0, "0"),
            (-2.5, "-2.5"),
            (7.0, "7"),
            (0.480018123, "0.480018"),
            (-0.0408357, "-0.0408357"),
            (24.70581, "24.7058"),
            (1178.0, "1178"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (999999.5, "1e+06"),
            (0.1, "0.1"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_g(x, false), want, "{x}");
        }
    }

    #[test]
    fn showpoint_keeps_trailing_zeros() {
        assert_eq!(format_g(0.5, true), "0.500000");
        assert_eq!(format_g(12.0, true), "12.0000");
        assert_eq!(format_g(0.0, true), "0.00000");
        assert_eq!(format_g(123456.0, true), "123456.");
        assert_eq!(format_g(1234567.0, true), "1.23457e+06");
    }

    #[test]
    fn number_parsing_is_strict() {
        assert_eq!(parse_finite_f64("6.5"), Some(6.5));
        assert_eq!(parse_finite_f64("-2"), Some(-2.0));
        assert_eq!(parse_finite_f64("1e3"), Some(1000.0));
        assert_eq!(parse_finite_f64("inf"), None);
        assert_eq!(parse_finite_f64("nan"), None);
        assert_eq!(parse_finite_f64("abc"), None);
        assert_eq!(parse_finite_f64(""), None);
        assert_eq!(parse_bool("TRUE"), Some(true));
        assert_eq!(parse_bool("1"), None);
        assert_eq!(parse_i64(" 42 "), Some(42));
    }
}
