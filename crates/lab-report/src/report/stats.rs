//! Statistics across repetitions.
//!
//! A cell is run a handful of times (often only 3), so everything here is
//! built for small samples: medians rather than means, rank tests with the
//! exact distribution, and bootstrap intervals from a seeded generator so
//! that a report rendered twice says the same thing.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use std::fmt;

/// The spread of one metric over the repetitions of one cell.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (divides by n - 1); 0 for one sample.
    pub sd: f64,
    /// Coefficient of variation, sd / mean; 0 when it has no meaning
    /// (one sample, or a mean of 0).
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// None for no samples: a cell that never produced the metric has no
    /// summary, and a zero-filled one would read as a measurement.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let sorted = sorted(samples);
        let n = sorted.len();
        let median = median_of_sorted(&sorted)?;
        let mean = mean(&sorted);
        let sd = sample_sd(&sorted, mean);
        let cv = if n < 2 || mean == 0.0 { 0.0 } else { sd / mean };
        Some(Summary {
            n,
            median,
            mean,
            sd,
            cv,
            min: sorted[0],
            max: sorted[n - 1],
        })
    }
}

/// The change from `base` to `new`, as a fraction: 0.1 is 10% higher.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// median(new) / median(base) - 1.
    pub ratio_median: f64,
    /// Bootstrap percentile interval of the same quantity.
    pub ci: (f64, f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: pairs (a, b) with a > b, ties counting ½.
    pub u: f64,
    pub p_two_sided: f64,
    /// True when p comes from the exact distribution of U, false when
    /// from the normal approximation.
    pub exact: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    pub p_two_sided: f64,
}

/// What a report says about one metric of one variant against its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    #[serde(rename = "better")]
    Better,
    #[serde(rename = "worse")]
    Worse,
    #[serde(rename = "no change")]
    NoChange,
    #[serde(rename = "too few runs")]
    TooFewRuns,
    /// Some sample was measured on a contended host: no verdict is given.
    #[serde(rename = "untrusted")]
    Untrusted,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoChange => "no change",
            Verdict::TooFewRuns => "too few runs",
            Verdict::Untrusted => "untrusted",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fewest repetitions per side before a verdict is given: with two, one
/// outlier decides the median.
pub const MIN_RUNS: usize = 3;

/// Largest n1 * n2 for which the exact U distribution is used. Its counts
/// peak at C(40, 20) ≈ 1.4e11 for 20 × 20, well inside u64, and beyond
/// that the normal approximation is good.
const EXACT_MAX_PAIRS: usize = 400;

/// Percentile bootstrap interval of the median at `level` (e.g. 0.95).
///
/// Seeded ChaCha8 and an index draw that uses only `next_u64` make the
/// interval identical on every run and platform for the same seed. None
/// for no samples, no resamples, or a level outside (0, 1).
pub fn bootstrap_median_ci(
    samples: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if samples.is_empty() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let medians: Vec<f64> = (0..resamples)
        .filter_map(|_| resampled_median(samples, &mut rng))
        .collect();
    percentile_interval(medians, level)
}

/// The relative change of medians from `base` to `new`, with a bootstrap
/// interval that resamples both sides independently, as the repetitions
/// of the two variants are independent runs.
///
/// None when either side is empty, the base median is 0 (no ratio), or
/// the parameters are out of range as for [`bootstrap_median_ci`].
/// Resamples whose base median is 0 are left out of the interval.
pub fn relative_change(
    base: &[f64],
    new: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Change> {
    if resamples == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let ratio_median = ratio_of_medians(base, new)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ratios: Vec<f64> = (0..resamples)
        .filter_map(|_| {
            let b = resampled_median(base, &mut rng)?;
            let n = resampled_median(new, &mut rng)?;
            let r = n / b - 1.0;
            r.is_finite().then_some(r)
        })
        .collect();
    let ci = percentile_interval(ratios, level)?;
    Some(Change { ratio_median, ci })
}

/// Two-sided Mann-Whitney U test of `a` against `b`, as
/// `scipy.stats.mannwhitneyu(a, b, alternative='two-sided')` computes it.
///
/// The exact distribution is used when there are no ties and n1 * n2 is
/// at most 400; otherwise the normal approximation with tie and
/// continuity corrections. An empty side gives U = 0 and p = 1.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return MannWhitney {
            u: 0.0,
            p_two_sided: 1.0,
            exact: false,
        };
    }
    let ranks = Ranks::of(a, b);
    let u1 = ranks.sum_first - (n1 * (n1 + 1)) as f64 / 2.0;
    let u_big = u1.max((n1 * n2) as f64 - u1);
    let exact = !ranks.has_ties && n1 * n2 <= EXACT_MAX_PAIRS;
    let p = if exact {
        2.0 * exact_u_sf(u_big.round() as usize, n1, n2)
    } else {
        2.0 * normal_u_sf(u_big, n1, n2, ranks.tie_term)
    };
    MannWhitney {
        u: u1,
        p_two_sided: p.clamp(0.0, 1.0),
        exact,
    }
}

/// Welch's unequal-variance t test of `a` against `b` (t > 0 when `a`'s
/// mean is larger), as `scipy.stats.ttest_ind(a, b, equal_var=False)`.
///
/// None with fewer than 2 samples on a side or when both sides have no
/// variance, where t is undefined.
pub fn welch_t(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let va = sample_sd(a, ma).powi(2) / a.len() as f64;
    let vb = sample_sd(b, mb).powi(2) / b.len() as f64;
    let se2 = va + vb;
    if se2 <= 0.0 {
        return None;
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(Welch {
        t,
        df,
        p_two_sided: (2.0 * dist.sf(t.abs())).min(1.0),
    })
}

/// Whether `new` is better or worse than `base` for a metric.
///
/// Better or worse needs both a change of medians larger than `noise`
/// (a fraction, e.g. 0.05) and a significant difference. Significant is
/// Mann-Whitney p < `alpha` OR no overlap at all between the samples:
/// with 3 runs against 3 the smallest exact two-sided p is 2/20 = 0.1, so
/// p < 0.05 can never happen, and complete separation is exactly the
/// outcome that gives that smallest p, the strongest evidence such a
/// sample can carry. Without the rule, 3-run matrices could only ever
/// say "no change".
pub fn verdict(
    base: &[f64],
    new: &[f64],
    lower_is_better: bool,
    noise: f64,
    alpha: f64,
) -> Verdict {
    if base.len() < MIN_RUNS || new.len() < MIN_RUNS {
        return Verdict::TooFewRuns;
    }
    let change = signed_change(base, new);
    let significant = mann_whitney(base, new).p_two_sided < alpha || disjoint(base, new);
    if change.abs() <= noise || !significant {
        return Verdict::NoChange;
    }
    if (change < 0.0) == lower_is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// The default direction of a metric, from the words of its name, e.g.
/// `write.clat_p99_ns` or `read.iops`.
///
/// Throughput words (`iops`, `bw`, `throughput`, `bandwidth`) mean higher
/// is better. Everything else, latencies (`lat`, `clat`, `slat`, `_ns`),
/// CPU use (`usr_cpu`, `sys_cpu`) and context switches (`ctx`) included,
/// is a cost: the claims this lab reproduces are mostly about time, so a
/// cost is the safer default for an unknown name.
pub fn lower_is_better(metric: &str) -> bool {
    const HIGHER: [&str; 4] = ["iops", "bw", "throughput", "bandwidth"];
    let lower = metric.to_ascii_lowercase();
    !lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| HIGHER.contains(&word))
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

pub fn median(samples: &[f64]) -> Option<f64> {
    median_of_sorted(&sorted(samples))
}

fn mean(samples: &[f64]) -> f64 {
    samples.iter().sum::<f64>() / samples.len() as f64
}

fn sample_sd(samples: &[f64], mean: f64) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let ss: f64 = samples.iter().map(|x| (x - mean).powi(2)).sum();
    (ss / (samples.len() - 1) as f64).sqrt()
}

fn ratio_of_medians(base: &[f64], new: &[f64]) -> Option<f64> {
    let (b, n) = (median(base)?, median(new)?);
    (b != 0.0).then(|| n / b - 1.0)
}

/// The relative change for [`verdict`]; a base median of 0 gives an
/// infinite change in the direction of `new`, or 0 when both are 0.
fn signed_change(base: &[f64], new: &[f64]) -> f64 {
    let (b, n) = (median(base).unwrap_or(0.0), median(new).unwrap_or(0.0));
    if b == 0.0 {
        return if n == 0.0 {
            0.0
        } else {
            f64::INFINITY * n.signum()
        };
    }
    (n - b) / b.abs()
}

/// Every value of one side lies strictly beyond every value of the other.
fn disjoint(a: &[f64], b: &[f64]) -> bool {
    let (sa, sb) = (Summary::of(a), Summary::of(b));
    match (sa, sb) {
        (Some(sa), Some(sb)) => sa.max < sb.min || sb.max < sa.min,
        _ => false,
    }
}

/// An index in 0..n, uniform: rejection of the top partial block of u64
/// avoids modulo bias, and uses nothing but `next_u64`, whose stream
/// ChaCha fixes for a seed.
fn uniform_index(rng: &mut ChaCha8Rng, n: usize) -> usize {
    let n = n as u64;
    let zone = u64::MAX - (u64::MAX % n);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return (x % n) as usize;
        }
    }
}

fn resampled_median(samples: &[f64], rng: &mut ChaCha8Rng) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let draw: Vec<f64> = (0..samples.len())
        .map(|_| samples[uniform_index(rng, samples.len())])
        .collect();
    median(&draw)
}

/// The (1 - level) / 2 and (1 + level) / 2 quantiles of `values`.
fn percentile_interval(values: Vec<f64>, level: f64) -> Option<(f64, f64)> {
    let sorted = sorted(&values);
    let tail = (1.0 - level) / 2.0;
    Some((quantile(&sorted, tail)?, quantile(&sorted, 1.0 - tail)?))
}

/// Linear interpolation between order statistics, numpy's default.
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Midranks of `a` and `b` pooled, as much as the U test needs of them.
struct Ranks {
    /// Sum of the ranks of `a`'s values (ranks from 1).
    sum_first: f64,
    has_ties: bool,
    /// Σ (t³ - t) over groups of t tied values.
    tie_term: f64,
}

impl Ranks {
    fn of(a: &[f64], b: &[f64]) -> Ranks {
        let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).collect();
        pooled.extend(b.iter().map(|&x| (x, false)));
        pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut ranks = Ranks {
            sum_first: 0.0,
            has_ties: false,
            tie_term: 0.0,
        };
        let mut start = 0;
        while start < pooled.len() {
            let end = start
                + pooled[start..]
                    .iter()
                    .take_while(|(x, _)| *x == pooled[start].0)
                    .count();
            let t = (end - start) as f64;
            let midrank = (start + 1 + end) as f64 / 2.0;
            let firsts = pooled[start..end]
                .iter()
                .filter(|(_, first)| *first)
                .count();
            ranks.sum_first += midrank * firsts as f64;
            if t > 1.0 {
                ranks.has_ties = true;
                ranks.tie_term += t * t * t - t;
            }
            start = end;
        }
        ranks
    }
}

/// P(U >= u) under H0 for samples of n1 and n2 without ties.
///
/// The number of orderings of n1 + n2 values with U = k is the
/// coefficient of q^k in the Gaussian binomial [n1 + n2 choose n1]_q,
/// built as Π_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i). After step i the
/// polynomial is [n2 + i choose i]_q, so every division is exact.
fn exact_u_sf(u: usize, n1: usize, n2: usize) -> f64 {
    let counts = u_counts(n1, n2);
    let total: u128 = counts.iter().sum();
    let tail: u128 = counts.iter().skip(u).sum();
    tail as f64 / total as f64
}

fn u_counts(n1: usize, n2: usize) -> Vec<u128> {
    let len = n1 * n2 + 1;
    let mut poly = vec![0i128; len];
    poly[0] = 1;
    for i in 1..=n1 {
        // × (1 - q^(n2 + i)), from the top so each term is read before it
        // is changed.
        for k in (n2 + i..len).rev() {
            poly[k] -= poly[k - n2 - i];
        }
        // ÷ (1 - q^i): the series 1 + q^i + q^2i + …, a strided prefix sum.
        for k in i..len {
            poly[k] += poly[k - i];
        }
    }
    poly.into_iter().map(|c| c as u128).collect()
}

/// P(U >= u) by the normal approximation, with the tie correction of the
/// variance and a continuity correction of ½.
fn normal_u_sf(u: f64, n1: usize, n2: usize, tie_term: f64) -> f64 {
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let mu = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        // Every value is the same: no evidence of any difference.
        return 1.0;
    }
    let z = (u - mu - 0.5) / var.sqrt();
    Normal::standard().sf(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples a and b, then what scipy computed for them.
    type UCase<'a> = (&'a [f64], &'a [f64], f64, f64);
    type WelchCase<'a> = (&'a [f64], &'a [f64], f64, f64, f64);

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn summary_of_samples() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.median, 4.5);
        assert_eq!(s.mean, 5.0);
        // Σ(x - 5)² = 32, / 7.
        assert!(close(s.sd, (32.0f64 / 7.0).sqrt(), 1e-12));
        assert!(close(s.cv, s.sd / 5.0, 1e-12));
        assert_eq!((s.min, s.max), (2.0, 9.0));
    }

    #[test]
    fn summary_edge_cases() {
        assert_eq!(Summary::of(&[]), None);
        let one = Summary::of(&[3.5]).unwrap();
        assert_eq!((one.n, one.median, one.sd, one.cv), (1, 3.5, 0.0, 0.0));
        let zero_mean = Summary::of(&[-1.0, 1.0]).unwrap();
        assert_eq!(zero_mean.cv, 0.0);
        assert_eq!(Summary::of(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
    }

    #[test]
    fn bootstrap_is_reproducible_and_covers_the_median() {
        let x = [9.97, 10.02, 9.95, 10.10, 9.99, 10.05, 9.91];
        let a = bootstrap_median_ci(&x, 0.95, 2000, 42).unwrap();
        let b = bootstrap_median_ci(&x, 0.95, 2000, 42).unwrap();
        assert_eq!(a.0.to_bits(), b.0.to_bits());
        assert_eq!(a.1.to_bits(), b.1.to_bits());
        let median = Summary::of(&x).unwrap().median;
        assert!(a.0 <= median && median <= a.1, "{a:?} vs {median}");
        assert!(a.0 >= 9.91 && a.1 <= 10.10);
        assert!(a.0 < a.1);
    }

    /// The intervals are pinned: a change of generator, of its stream, or
    /// of the index draw would silently change every published report.
    #[test]
    fn bootstrap_stream_is_pinned_per_seed() {
        let y: Vec<f64> = (1..=20).map(|i| f64::from(i * i) / 7.0).collect();
        assert_eq!(
            bootstrap_median_ci(&y, 0.9, 37, 1),
            Some((7.857142857142857, 24.642857142857135))
        );
        assert_eq!(
            bootstrap_median_ci(&y, 0.9, 37, 2),
            Some((7.0, 26.35714285714286))
        );
    }

    #[test]
    fn bootstrap_rejects_bad_input() {
        assert_eq!(bootstrap_median_ci(&[], 0.95, 100, 1), None);
        assert_eq!(bootstrap_median_ci(&[1.0], 0.95, 0, 1), None);
        assert_eq!(bootstrap_median_ci(&[1.0], 1.0, 10, 1), None);
        assert_eq!(bootstrap_median_ci(&[1.0], 0.0, 10, 1), None);
        assert_eq!(bootstrap_median_ci(&[4.0], 0.9, 10, 1), Some((4.0, 4.0)));
    }

    #[test]
    fn wider_level_gives_wider_interval() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
        let narrow = bootstrap_median_ci(&x, 0.5, 4000, 7).unwrap();
        let wide = bootstrap_median_ci(&x, 0.99, 4000, 7).unwrap();
        assert!(wide.0 <= narrow.0 && narrow.1 <= wide.1);
        assert!(wide.1 - wide.0 > narrow.1 - narrow.0);
    }

    #[test]
    fn relative_change_of_medians() {
        let base = [9.97, 9.98, 9.96, 9.99, 9.95];
        let new = [1.16, 1.17, 1.15, 1.18, 1.14];
        let c = relative_change(&base, &new, 0.95, 2000, 1).unwrap();
        assert!(close(c.ratio_median, 1.16 / 9.97 - 1.0, 1e-12));
        assert!(c.ci.0 <= c.ratio_median && c.ratio_median <= c.ci.1);
        // Every resampled ratio lies between the extreme ratios.
        assert!(c.ci.0 >= 1.14 / 9.99 - 1.0 && c.ci.1 <= 1.18 / 9.95 - 1.0);
        assert_eq!(c, relative_change(&base, &new, 0.95, 2000, 1).unwrap());
    }

    #[test]
    fn relative_change_without_a_ratio() {
        assert_eq!(relative_change(&[], &[1.0], 0.95, 10, 1), None);
        assert_eq!(relative_change(&[1.0], &[], 0.95, 10, 1), None);
        assert_eq!(relative_change(&[0.0, 0.0, 0.0], &[1.0], 0.95, 10, 1), None);
        let same = relative_change(&[2.0, 2.0], &[3.0, 3.0], 0.9, 10, 1).unwrap();
        assert_eq!(same.ratio_median, 0.5);
        assert_eq!(same.ci, (0.5, 0.5));
    }

    /// Expected values from scipy 1.17.1:
    /// `mannwhitneyu(a, b, method='exact', alternative='two-sided')`.
    #[test]
    fn mann_whitney_exact_matches_scipy() {
        let cases: [UCase; 7] = [
            (&[1., 2., 3.], &[4., 5., 6.], 0.0, 0.1),
            (
                &[1., 2., 3., 4., 5.],
                &[6., 7., 8., 9., 10.],
                0.0,
                0.007936507936507936,
            ),
            (&[1., 3., 5.], &[2., 4., 6.], 3.0, 0.7),
            (&[1., 4., 5., 8.], &[2., 3., 6., 7.], 8.0, 1.0),
            (&[9.97, 9.98, 9.96], &[1.16, 1.17, 1.15], 9.0, 0.1),
            (
                &[1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7],
                &[2.5, 3.5, 8.5, 9.5, 10.5],
                9.0,
                0.20202020202020204,
            ),
            (
                &[3.1, 4.7, 1.2, 8.8, 5.5, 6.1, 7.3, 2.9, 9.4, 0.5, 4.4, 6.6],
                &[5.2, 7.7, 9.9, 8.1, 6.3, 10.4, 11.2, 7.1, 12.5, 9.0, 8.4],
                20.0,
                0.0035604454772579686,
            ),
        ];
        for (a, b, u, p) in cases {
            let r = mann_whitney(a, b);
            assert!(r.exact, "{a:?} {b:?}");
            assert_eq!(r.u, u, "{a:?} {b:?}");
            assert!(close(r.p_two_sided, p, 1e-12), "{a:?} {b:?}: {r:?}");
        }
    }

    /// Expected values from scipy 1.17.1: `mannwhitneyu(a, b,
    /// method='asymptotic', alternative='two-sided', use_continuity=True)`.
    #[test]
    fn mann_whitney_normal_matches_scipy() {
        let big_a: Vec<f64> = (0..25).map(f64::from).collect();
        let big_b: Vec<f64> = (5..30).map(|x| f64::from(x) + 0.5).collect();
        let cases: [UCase; 4] = [
            (
                &[1., 2., 2., 3., 4.],
                &[2., 3., 3., 5., 6., 7.],
                6.0,
                0.11390314458853068,
            ),
            (&[1., 2., 3.], &[1., 2., 3.], 4.5, 1.0),
            (&big_a, &big_b, 190.0, 0.017925777357406476),
            (
                &[1., 1., 2., 2., 3., 3., 4., 4., 5., 5.],
                &[3., 3., 4., 4., 5., 5., 6., 6., 7., 7., 8., 8.],
                18.0,
                0.005711919198641549,
            ),
        ];
        for (a, b, u, p) in cases {
            let r = mann_whitney(a, b);
            assert!(!r.exact, "{a:?} {b:?}");
            assert_eq!(r.u, u);
            assert!(close(r.p_two_sided, p, 1e-9), "{a:?} {b:?}: {r:?}");
        }
    }

    #[test]
    fn mann_whitney_degenerate_samples() {
        let same = mann_whitney(&[5.0; 4], &[5.0; 4]);
        assert_eq!((same.u, same.p_two_sided, same.exact), (8.0, 1.0, false));
        let empty = mann_whitney(&[], &[1.0]);
        assert_eq!(empty.p_two_sided, 1.0);
    }

    #[test]
    fn exact_u_counts_are_the_gaussian_binomial() {
        // n1 = n2 = 3: 20 orderings, U = 0..9.
        let c = u_counts(3, 3);
        assert_eq!(c, vec![1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
        // C(40, 20) orderings at the largest exact size.
        assert_eq!(u_counts(20, 20).iter().sum::<u128>(), 137_846_528_820);
        assert_eq!(u_counts(1, 400).iter().sum::<u128>(), 401);
    }

    /// Expected values from scipy 1.17.1: `ttest_ind(a, b, equal_var=False)`.
    #[test]
    fn welch_matches_scipy() {
        let cases: [WelchCase; 3] = [
            (
                &[9.97, 9.98, 9.96, 9.99],
                &[1.16, 1.20, 1.15],
                530.9614778014432,
                2.7202331390507593,
                6.665266036418764e-08,
            ),
            (
                &[1., 2., 3., 4., 5.],
                &[2., 4., 6., 8., 10., 12.],
                -2.3763541031440183,
                6.972255729794934,
                0.04928433820673053,
            ),
            (
                &[10.1, 10.4, 9.8, 10.0, 10.3],
                &[10.6, 10.9, 10.2, 11.0],
                -2.6551782219702984,
                5.022606592175386,
                0.04494166660149882,
            ),
        ];
        for (a, b, t, df, p) in cases {
            let w = welch_t(a, b).unwrap();
            assert!(close(w.t, t, 1e-9), "{w:?}");
            assert!(close(w.df, df, 1e-9), "{w:?}");
            assert!(close(w.p_two_sided, p, 1e-6), "{w:?} vs {p}");
        }
    }

    #[test]
    fn welch_needs_two_samples_and_variance() {
        assert_eq!(welch_t(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch_t(&[1.0, 1.0], &[2.0, 2.0]), None);
    }

    #[test]
    fn verdict_display() {
        assert_eq!(Verdict::Better.to_string(), "better");
        assert_eq!(Verdict::Worse.to_string(), "worse");
        assert_eq!(Verdict::NoChange.to_string(), "no change");
        assert_eq!(Verdict::TooFewRuns.to_string(), "too few runs");
    }

    #[test]
    fn verdict_three_runs_without_overlap_is_significant() {
        let before = [9.97, 9.98, 9.96];
        let after = [1.16, 1.17, 1.15];
        assert_eq!(verdict(&before, &after, true, 0.05, 0.05), Verdict::Better);
        assert_eq!(verdict(&before, &after, false, 0.05, 0.05), Verdict::Worse);
        assert_eq!(verdict(&after, &before, true, 0.05, 0.05), Verdict::Worse);
    }

    #[test]
    fn verdict_needs_size_and_significance() {
        // Separated but within the noise band: 1% apart.
        let base = [100.0, 100.1, 100.2];
        let near = [101.0, 101.1, 101.2];
        assert_eq!(verdict(&base, &near, true, 0.05, 0.05), Verdict::NoChange);
        // A large median change, but the samples overlap and p = 0.7.
        let spread_base = [10.0, 30.0, 50.0];
        let spread_new = [20.0, 40.0, 60.0];
        assert!(mann_whitney(&spread_base, &spread_new).p_two_sided > 0.5);
        assert_eq!(
            verdict(&spread_base, &spread_new, true, 0.05, 0.05),
            Verdict::NoChange
        );
        // Overlapping, but significant by p with more runs.
        let a = [3.1, 4.7, 1.2, 8.8, 5.5, 6.1, 7.3, 2.9, 9.4, 0.5, 4.4, 6.6];
        let b = [5.2, 7.7, 9.9, 8.1, 6.3, 10.4, 11.2, 7.1, 12.5, 9.0, 8.4];
        assert!(!disjoint(&a, &b));
        assert_eq!(verdict(&a, &b, false, 0.05, 0.05), Verdict::Better);
    }

    #[test]
    fn verdict_too_few_runs() {
        let three = [1.0, 2.0, 3.0];
        assert_eq!(
            verdict(&[1.0, 2.0], &three, true, 0.05, 0.05),
            Verdict::TooFewRuns
        );
        assert_eq!(
            verdict(&three, &[9.0, 9.0], true, 0.05, 0.05),
            Verdict::TooFewRuns
        );
    }

    #[test]
    fn verdict_from_a_zero_base() {
        let zero = [0.0, 0.0, 0.0];
        assert_eq!(verdict(&zero, &zero, true, 0.05, 0.05), Verdict::NoChange);
        assert_eq!(
            verdict(&zero, &[1.0, 2.0, 3.0], false, 0.05, 0.05),
            Verdict::Better
        );
    }

    #[test]
    fn metric_direction_from_its_name() {
        for cost in [
            "write.lat_mean",
            "read.clat_p99_ns",
            "slat_mean",
            "lat_ns",
            "usr_cpu",
            "sys_cpu",
            "ctx",
            "elapsed_s",
        ] {
            assert!(lower_is_better(cost), "{cost}");
        }
        for gain in [
            "read.iops",
            "write.bw",
            "bw_bytes",
            "iops_mean",
            "READ.IOPS",
        ] {
            assert!(!lower_is_better(gain), "{gain}");
        }
    }
}
