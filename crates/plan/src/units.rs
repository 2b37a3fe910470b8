//! Sizes and lists as the user types them (docs/design.md §3), and sizes as we print them.

/// Parses a byte count: a plain number of bytes, or a number with a unit.
/// `KiB`/`MiB`/`GiB`/`TiB` and the short `K`/`M`/`G`/`T` are binary; `KB`/`MB`/`GB`/`TB`
/// are decimal, as on a disk's label. Fractions are allowed when the result is a whole
/// number of bytes (`1.5KiB` is 1536, `0.5B` is an error).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number = number.replace('_', "");
    let multiplier: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "K" | "k" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "M" | "m" | "MiB" | "Mi" => 1 << 20,
        "G" | "g" | "GiB" | "Gi" => 1 << 30,
        "T" | "t" | "TiB" | "Ti" => 1 << 40,
        "KB" | "kB" | "kb" => 1_000,
        "MB" | "mb" => 1_000_000,
        "GB" | "gb" => 1_000_000_000,
        "TB" | "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "invalid size '{text}': unknown unit '{other}' (use B, KiB, MiB, GiB, TiB, K, M, G, T, KB, MB, GB or TB)"
            ));
        }
    };
    if number.is_empty() || number.matches('.').count() > 1 {
        return Err(format!("invalid size '{text}': expected a number such as 4KiB or 256MiB"));
    }
    let bytes = if let Some((whole, fraction)) = number.split_once('.') {
        // Exact decimal arithmetic: 1.5KiB must be 1536, not 1535.99…
        let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| overflow(text))? };
        let scale = 10u128.checked_pow(fraction.len() as u32).ok_or_else(|| overflow(text))?;
        let fraction: u128 = if fraction.is_empty() { 0 } else { fraction.parse().map_err(|_| overflow(text))? };
        let numerator = (whole * scale + fraction).checked_mul(multiplier as u128).ok_or_else(|| overflow(text))?;
        if numerator % scale != 0 {
            return Err(format!("invalid size '{text}': not a whole number of bytes"));
        }
        numerator / scale
    } else {
        let whole: u128 = number.parse().map_err(|_| overflow(text))?;
        whole.checked_mul(multiplier as u128).ok_or_else(|| overflow(text))?
    };
    u64::try_from(bytes).map_err(|_| overflow(text))
}

fn overflow(text: &str) -> String {
    format!("invalid size '{text}': too large")
}

/// A size for people, in binary units, exact when possible: `4 KiB`, `1 GiB`,
/// and inexact sizes get two decimals (`409600000` is `390.62 MiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 5] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)];
    // The largest unit that keeps the number at least 1; exact when it divides.
    for (name, factor) in UNITS {
        if bytes >= factor {
            return if bytes % factor == 0 {
                format!("{} {name}", bytes / factor)
            } else {
                format!("{:.2} {name}", bytes as f64 / factor as f64)
            };
        }
    }
    "0 B".to_string()
}

/// The compact form used inside case ids (`4KiB`), so an id is one token per dimension.
pub fn format_size_compact(bytes: u64) -> String {
    format_size(bytes).replace(' ', "")
}

/// Splits a comma-separated option value, rejecting empty items (`a,,b`, a trailing comma).
pub fn split_list(text: &str) -> Result<Vec<String>, String> {
    let items: Vec<String> = text.split(',').map(|item| item.trim().to_string()).collect();
    if items.iter().any(String::is_empty) {
        return Err(format!("invalid list '{text}': empty item (lists are comma-separated, e.g. 4KiB,1MiB)"));
    }
    Ok(items)
}

/// Decimal GB/s, as rapidgzip's benchmarkIOWrite results and the IO Playground print throughput.
pub fn gb_per_s(bytes_per_second: f64) -> f64 {
    bytes_per_second / 1e9
}

/// Parses a duration: seconds (`90`, `1.5`), or numbers with units `h`, `m`, `s` and
/// `ms`, one after another (`30s`, `2m`, `1m30s`, `500ms`). It must be above zero.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let invalid =
        || format!("invalid duration '{text}': expected seconds or a number with h, m, s or ms, e.g. 30s, 2m, 1m30s");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(invalid());
    }
    let mut seconds = 0.0f64;
    let mut rest = trimmed;
    while !rest.is_empty() {
        let split = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, after) = rest.split_at(split);
        let value: f64 = number.parse().map_err(|_| invalid())?;
        let unit_end = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let scale = match unit {
            "" if split == rest.len() && rest.len() == trimmed.len() => 1.0,
            "h" => 3600.0,
            "m" | "min" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(invalid()),
        };
        seconds += value * scale;
        rest = next;
    }
    if !(seconds > 0.0 && seconds < 1e9) {
        return Err(format!("invalid duration '{text}': must be above zero"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1B"), Ok(1));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1 G"), Ok(1 << 30));
        assert_eq!(parse_size("2TiB"), Ok(2 << 40));
        assert_eq!(parse_size("400MB"), Ok(400_000_000));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("409_600_000"), Ok(409_600_000));
    }

    #[test]
    fn bad_sizes_are_errors_with_the_input_named() {
        for bad in ["", "abc", "12XB", "1..5K", "0.5B", "-1K", "99999999999999999999999", "20000000TiB", "K"] {
            let error = parse_size(bad).expect_err(bad);
            assert!(error.contains(&format!("'{bad}'")), "{error}");
            assert!(!error.contains('\n'));
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(1), "1 B");
        assert_eq!(format_size(1000), "1000 B");
        assert_eq!(format_size(1536), "1.50 KiB");
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(409_600_000), "390.62 MiB");
        assert_eq!(format_size_compact(65536), "64KiB");
    }

    #[test]
    fn lists() {
        assert_eq!(split_list("a, b,c").unwrap(), vec!["a", "b", "c"]);
        assert!(split_list("a,,b").is_err());
        assert!(split_list("a,").is_err());
        assert!(split_list("").is_err());
    }

    #[test]
    fn durations_in_seconds_or_with_units() {
        let secs = |text: &str| parse_duration(text).map(|d| d.as_secs_f64());
        assert_eq!(secs("30s"), Ok(30.0));
        assert_eq!(secs("90"), Ok(90.0));
        assert_eq!(secs("1.5"), Ok(1.5));
        assert_eq!(secs("2m"), Ok(120.0));
        assert_eq!(secs("1m30s"), Ok(90.0));
        assert_eq!(secs("1h"), Ok(3600.0));
        assert_eq!(secs("500ms"), Ok(0.5));
        for bad in ["", "s", "0", "0s", "-3s", "30x", "3 0s", "1.2.3s", "30s5"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
