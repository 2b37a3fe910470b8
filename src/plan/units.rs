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
}
