//! Spearman's rank correlation, for the carry-over checks (docs/measurement.md,
//! "Between runs"): exact by permutation for few pairs, Student's t above.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spearman {
    pub rho: f64,
    /// Two-sided: exact by permutation up to 8 pairs, from Student t above.
    pub p: f64,
}

/// Spearman's rank correlation of `x` and `y` (average ranks for ties); None with
/// fewer than three pairs or where either side has no spread.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<Spearman> {
    let n = x.len();
    if n < 3 || n != y.len() {
        return None;
    }
    let (rx, ry) = (ranks(x), ranks(y));
    let rho = pearson(&rx, &ry)?;
    let p = if n <= 8 {
        // Exact: the share of the n! orders of y's ranks correlating at least as strongly.
        let mut order: Vec<usize> = (0..n).collect();
        let (mut extreme, mut total) = (0u64, 0u64);
        permute(&mut order, 0, &mut |perm| {
            let permuted: Vec<f64> = perm.iter().map(|&i| ry[i]).collect();
            let r = pearson(&rx, &permuted).unwrap_or(0.0);
            total += 1;
            if r.abs() >= rho.abs() - 1e-12 {
                extreme += 1;
            }
        });
        extreme as f64 / total as f64
    } else {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        let df = (n - 2) as f64;
        let t = rho * (df / (1.0 - rho * rho).max(1e-12)).sqrt();
        let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
        2.0 * (1.0 - dist.cdf(t.abs()))
    };
    Some(Spearman { rho, p: p.clamp(0.0, 1.0) })
}

fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        let rank = (start + end) as f64 / 2.0 + 1.0;
        for &index in &order[start..=end] {
            ranks[index] = rank;
        }
        start = end + 1;
    }
    ranks
}

fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Calls `visit` with every order of `items[at..]` (Heap's algorithm would do too;
/// n ≤ 8 keeps it at 40,320 orders).
fn permute(items: &mut [usize], at: usize, visit: &mut dyn FnMut(&[usize])) {
    if at == items.len() {
        visit(items);
        return;
    }
    for i in at..items.len() {
        items.swap(at, i);
        permute(items, at + 1, visit);
        items.swap(at, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_is_exact_for_few_runs() {
        let s = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0]).unwrap();
        assert!((s.rho - 1.0).abs() < 1e-12);
        // Two of the 720 orders are as extreme (rho = 1 and rho = -1).
        assert!((s.p - 2.0 / 720.0).abs() < 1e-12, "{s:?}");
        let none = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3.0, 6.0, 1.0, 5.0, 2.0, 4.0]).unwrap();
        assert!(none.p > 0.3, "{none:?}");
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None, "no spread");
    }
}
