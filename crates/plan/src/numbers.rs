//! How a number is written wherever a user reads one (docs/design.md §3): three
//! significant digits, decimal GB/s, operations per second with k and M, durations, factors
//! like `1.8x`, and benchmarkIOWrite's "mean ± sd" and "%g" forms. One module, so
//! that the Answer, the table, the reports and the comparison write a figure alike. It sits
//! this low because the recommendations' sentences (analysis) and the exporters both write
//! numbers.

/// Three significant digits: `2.10`, `12.3`, `0.512`; `123` from 100 on.
pub fn three_digits(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        // Enough decimals for three significant digits below 1.
        let decimals = (2 - magnitude.log10().floor() as i32).clamp(3, 12) as usize;
        format!("{value:.decimals$}")
    }
}

/// 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A throughput in bytes/s as decimal GB/s (docs/design.md §3).
pub fn gbps(bytes_per_second: f64) -> String {
    format!("{} GB/s", three_digits(bytes_per_second / 1e9))
}

/// A rate of operations, with k or M from 10,000 on: `4.10 k`, `1.20 M`.
pub fn per_second(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{} M", three_digits(rate / 1e6))
    } else if rate >= 1e4 {
        format!("{} k", three_digits(rate / 1e3))
    } else {
        format!("{rate:.0}")
    }
}

/// A latency in nanoseconds as µs (or ms from 10 ms on).
pub fn micros(nanoseconds: f64) -> String {
    if nanoseconds >= 1e7 {
        format!("{} ms", three_digits(nanoseconds / 1e6))
    } else {
        format!("{} µs", three_digits(nanoseconds / 1e3))
    }
}

/// A duration in seconds: as s from 1 s on, else as ms or µs.
pub fn seconds(value: f64) -> String {
    if value >= 1.0 {
        format!("{} s", three_digits(value))
    } else if value >= 1e-3 {
        format!("{} ms", three_digits(value * 1e3))
    } else {
        format!("{} µs", three_digits(value * 1e6))
    }
}

/// Seconds at a fixed place in the unit that reads best: `21 µs`, `3.4 ms`, `1.234 s`
/// (when a rank started and ended within its job).
pub fn seconds_fixed(value: f64) -> String {
    if value < 1e-3 {
        format!("{:.0} µs", value * 1e6)
    } else if value < 1.0 {
        format!("{:.1} ms", value * 1e3)
    } else {
        format!("{value:.3} s")
    }
}

/// "30 s", "1 min 30 s": a budget as the user would type it back.
pub fn seconds_words(seconds: f64) -> String {
    let whole = seconds.round() as u64;
    match (whole / 60, whole % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

/// A factor: two decimals under 2 (where 1.04 and 1.06 differ), one under 10, none above.
pub fn factor(value: f64) -> String {
    if value < 2.0 {
        format!("{value:.2}x")
    } else if value < 10.0 {
        format!("{value:.1}x")
    } else {
        format!("{value:.0}x")
    }
}

/// Mantissa and exponent (after rounding to `prec` decimals) of `x`; rounding is
/// left to the formatter since log10/powi arithmetic slips near powers of ten.
fn sci(x: f64, prec: usize) -> (String, i32) {
    let s = format!("{x:.prec$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.to_owned(), e.parse().unwrap_or(0))
}

/// `x` rounded to a multiple of 10^place; integers when place >= 0.
fn fixed(x: f64, place: i32) -> String {
    let s = if place >= 0 {
        let unit = 10f64.powi(place);
        format!("{:.0}", (x / unit).round() * unit)
    } else {
        format!("{x:.prec$}", prec = place.unsigned_abs() as usize)
    };
    // A tiny negative mean rounded to zero must not read as "-0.00".
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_owned(),
        _ => s,
    }
}

/// benchmarkIOWrite's display of "mean ± sd": digits of the mean beyond the precision of
/// the sd are noise, so both are rounded to one place, the last significant digit
/// the sd keeps: two digits when the sd starts with 1 or 2 (rounding 0.14 to 0.1 would
/// be a 30 % error), else one. The place comes from the sd as given, before rounding,
/// so that it never jumps back as the sd grows: 0.0996 and 0.1004 both print at the
/// hundredths ("0.10"), where taking it after rounding would print 0.0996 as "0.1".
/// sd == 0 (n == 1) gives the mean with 4 significant digits and " ± 0";
/// non-finite input gives "n/a".
pub fn format_mean_sd(mean: f64, sd: f64) -> String {
    if !mean.is_finite() || !sd.is_finite() {
        return "n/a".to_owned();
    }
    let sd = sd.abs();
    if sd == 0.0 {
        let place = if mean == 0.0 { 0 } else { sci(mean, 3).1 - 3 };
        return format!("{} ± 0", fixed(mean, place));
    }
    // Shortest round-trip form: its first character is the first significant digit
    // and its exponent the place of that digit, both exact (no log10 rounding).
    let shortest = format!("{sd:e}");
    let exponent: i32 = shortest.split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0);
    let place = match shortest.as_bytes()[0] {
        b'1' | b'2' => exponent - 1,
        _ => exponent,
    };
    format!("{} ± {}", fixed(mean, place), fixed(sd, place))
}

/// Like C++ iostream default output of a double (printf "%g", 6 significant
/// digits, trailing zeros removed), so min/max match benchmarkIOWrite's output
/// character for character.
pub fn format_g6(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}").replace("NaN", "nan"); // glibc: nan, inf, -inf
    }
    let trim = |s: String| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_owned() } else { s }
    };
    // %g picks the style from the exponent after rounding to 6 digits.
    let (mant, exp) = sci(x, 5);
    if (-4..6).contains(&exp) {
        trim(format!("{x:.prec$}", prec = (5 - exp) as usize))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.unsigned_abs())
    }
}

/// benchmarkIOWrite's line, e.g. "( min: 5.84402, 6.11 ± 0.13, max: 6.25867 )".
pub fn format_seed_style(min: f64, mean: f64, sd: f64, max: f64) -> String {
    let mid = format_mean_sd(mean, sd);
    format!("( min: {}, {mid}, max: {} )", format_g6(min), format_g6(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    /// Three significant digits, never in exponent form, whatever the table.
    #[test]
    fn three_significant_digits_without_exponents() {
        assert_eq!(
            [1.0, 0.2601, 12.345, 1234.6, 0.000123, 4.6512, 0.063512, 112.4, -3.214, 0.0].map(three_digits),
            ["1.00", "0.260", "12.3", "1235", "0.000123", "4.65", "0.0635", "112", "-3.21", "0"]
        );
    }

    #[test]
    fn seconds_fixed_keeps_its_place_per_unit() {
        assert_eq!([0.0000214, 0.00312, 1.2344].map(seconds_fixed), ["21 µs", "3.1 ms", "1.234 s"]);
    }

    #[test]
    fn mean_sd_seed_examples() {
        for (mean, sd, want) in [
            (6.1101, 0.1302, "6.11 ± 0.13"),
            (1.8291, 0.0221, "1.829 ± 0.022"),
            (201234.0, 71234.0, "200000 ± 70000"),
            (6.3118, 0.0931, "6.31 ± 0.09"),
            (1461234.0, 189999.0, "1460000 ± 190000"),
            (3.3612, 0.1004, "3.36 ± 0.10"),
            (809876.0, 101000.0, "810000 ± 100000"),
            (4.6112, 0.2549, "4.61 ± 0.25"),
        ] {
            assert_eq!(format_mean_sd(mean, sd), want, "({mean}, {sd})");
        }
    }

    #[test]
    fn mean_sd_carry_zero_and_non_finite() {
        for (mean, sd, want) in [
            // The place comes from the sd before rounding: 0.0996 is at the hundredths.
            (2.345, 0.0996, "2.35 ± 0.10"),
            (2.345, 0.0396, "2.35 ± 0.04"),
            (512.0, 96.0, "510 ± 100"),
            // First digit 2 keeps two digits; the carry 29.6 -> 30 moves no place.
            (2.3456, 0.0296, "2.346 ± 0.030"),
            (-0.001, 0.5, "0.0 ± 0.5"),
            // Only a zero loses its sign: a real negative value keeps it.
            (-1.5, 0.3, "-1.5 ± 0.3"),
            (std::f64::consts::PI, 0.0, "3.142 ± 0"),
            (123456.0, 0.0, "123500 ± 0"),
            (0.0, 0.0, "0 ± 0"),
            (f64::NAN, 1.0, "n/a"),
            (1.0, f64::INFINITY, "n/a"),
        ] {
            assert_eq!(format_mean_sd(mean, sd), want, "({mean}, {sd})");
        }
    }

    #[test]
    fn sd_rounding_has_one_place_on_both_sides_of_a_power_of_ten() {
        // Defect 1.6: 0.0996 printed "0.1" (tenths) and 0.1004 "0.10" (hundredths).
        assert_eq!(format_mean_sd(3.3612, 0.0996), "3.36 ± 0.10");
        assert_eq!(format_mean_sd(3.3612, 0.1004), "3.36 ± 0.10");
        assert_eq!(format_mean_sd(3361.2, 99.6), format_mean_sd(3361.2, 100.4));
        // The place never moves right as the sd grows.
        let place = |sd: f64| {
            let text = format_mean_sd(1.0, sd);
            let sd_text = text.split(" ± ").nth(1).unwrap().to_owned();
            sd_text.split_once('.').map_or(0, |(_, decimals)| decimals.len())
        };
        let mut previous = usize::MAX;
        for step in 1..2000 {
            let decimals = place(step as f64 * 0.0007);
            assert!(decimals <= previous, "sd {}", step as f64 * 0.0007);
            previous = decimals;
        }
    }

    #[test]
    fn g6_like_iostream() {
        for (x, want) in [
            (5.844021, "5.84402"),
            (19745.23, "19745.2"),
            (1145324.6, "1.14532e+06"),
            (240749.0, "240749"),
            (0.0001234567, "0.000123457"),
            (0.0000123456789, "1.23457e-05"),
            (0.0, "0"),
            (999999.7, "1e+06"),
            (-1.5e-300, "-1.5e-300"),
        ] {
            assert_eq!(format_g6(x), want, "{x}");
        }
    }

    #[test]
    fn seed_style_line() {
        let line = format_seed_style(5.84402, 6.1101, 0.1302, 6.25867);
        assert_eq!(line, "( min: 5.84402, 6.11 ± 0.13, max: 6.25867 )");
    }
}
