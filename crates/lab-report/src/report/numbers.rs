//! Units and number formatting shared by the renderers.

pub use crate::units::display_unit;

/// A value with about four significant digits, never in exponent form.
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let digits = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else if a >= 0.01 {
        3
    } else if a == 0.0 {
        0
    } else {
        // Enough decimals for three significant digits.
        (2.0 - a.log10().floor()) as usize
    };
    format!("{v:.digits$}")
}

pub fn opt_value(v: Option<f64>) -> String {
    v.map(value).unwrap_or_else(|| "-".into())
}

/// A fraction as a signed percentage: `-87.8%`.
pub fn change(f: f64) -> String {
    if !f.is_finite() {
        return "-".into();
    }
    let p = f * 100.0;
    if p.abs() >= 100.0 {
        format!("{p:+.0}%")
    } else {
        format!("{p:+.1}%")
    }
}

pub fn opt_change(f: Option<f64>) -> String {
    f.map(change).unwrap_or_else(|| "-".into())
}

/// An interval of fractions as percentages: `-88.1..-87.4%`.
pub fn change_ci(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([lo, hi]) => {
            let p = |f: f64| {
                let p = f * 100.0;
                if p.abs() >= 100.0 {
                    format!("{p:+.0}")
                } else {
                    format!("{p:+.1}")
                }
            };
            format!("{}..{}%", p(lo), p(hi))
        }
        None => "-".into(),
    }
}

/// A fraction as an unsigned percentage: `4.2%`.
pub fn percent(f: f64) -> String {
    if !f.is_finite() {
        return "-".into();
    }
    let p = f * 100.0;
    if p >= 100.0 || p == p.round() {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// A p value: `0.1`, `0.0079`, `<1e-6`.
pub fn p_value(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p < 1e-6 => "<1e-6".into(),
        Some(p) if p >= 0.01 => format!("{p:.2}"),
        Some(p) => format!("{p:.1e}"),
    }
}

/// A ratio: `1.06`.
pub fn ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r.is_finite() => {
            if r >= 100.0 {
                format!("{r:.0}")
            } else {
                format!("{r:.2}")
            }
        }
        _ => "-".into(),
    }
}

/// Repetition numbers as `rep 2` or `reps 1, 3`.
pub fn reps(reps: &[u32]) -> String {
    match reps {
        [] => String::new(),
        [one] => format!("rep {one}"),
        many => format!(
            "reps {}",
            many.iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_fit_the_values() {
        assert_eq!(display_unit("ns", [1.2e6, 2.0e7]), ("ms".into(), 1e6));
        assert_eq!(display_unit("ns", [999.0]), ("ns".into(), 1.0));
        assert_eq!(display_unit("ns", [12_000.0]), ("us".into(), 1e3));
        assert_eq!(display_unit("ns", [3e9]), ("s".into(), 1e9));
        assert_eq!(display_unit("ns", []), ("ns".into(), 1.0));
        assert_eq!(display_unit("%", [50.0]), ("%".into(), 1.0));
        assert_eq!(display_unit("IOPS", [180_000.0]).0, "kIOPS");
    }

    #[test]
    fn values_read_well() {
        assert_eq!(value(10.07), "10.07");
        assert_eq!(value(1.2345), "1.23");
        assert_eq!(value(123.45), "123.5");
        assert_eq!(value(12345.6), "12346");
        assert_eq!(value(0.1234), "0.123");
        assert_eq!(value(0.001234), "0.00123");
        assert_eq!(value(0.0), "0");
        assert_eq!(change(-0.8778), "-87.8%");
        assert_eq!(change(1.5), "+150%");
        assert_eq!(change_ci(Some([-0.881, -0.874])), "-88.1..-87.4%");
        assert_eq!(percent(0.05), "5%");
        assert_eq!(percent(0.123), "12.3%");
        assert_eq!(p_value(Some(0.1)), "0.10");
        assert_eq!(p_value(Some(0.0079)), "7.9e-3");
        assert_eq!(reps(&[1, 3]), "reps 1, 3");
    }
}
