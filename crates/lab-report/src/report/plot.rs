//! Inline SVG plots, drawn with plotters' SVG backend. Text is emitted
//! as SVG `<text>` with a generic font family, so no font file is read.

use plotters::prelude::*;

const FONT: &str = "sans-serif";

/// Colors per variant, the baseline first: distinguishable in print.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

pub fn color_hex(i: usize) -> String {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One variant's value in one category, already in display units.
pub struct Point {
    pub median: f64,
    pub ci: Option<(f64, f64)>,
    pub samples: Vec<f64>,
    /// What the mail claims for this cell, in the same units.
    pub claimed: Option<f64>,
}

pub struct Series {
    pub name: String,
    /// Index into the palette, so a variant keeps its color everywhere.
    pub color: usize,
    /// One entry per category.
    pub points: Vec<Option<Point>>,
}

/// A theoretical maximum per category (a derived bound), drawn as a
/// bar across the category beside the measured medians.
pub struct Bound {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

type Res = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Draw into a `w`×`h` SVG; a failed drawing becomes an SVG that says so.
fn render(w: u32, h: u32, draw: impl FnOnce(&mut String, (u32, u32)) -> Res) -> String {
    let mut svg = String::new();
    match draw(&mut svg, (w, h)) {
        // Inline SVG in HTML needs no namespace, and the page then holds
        // no URL at all.
        Ok(()) => svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1),
        Err(e) => error_svg(w, h, e),
    }
}

fn error_svg(w: u32, h: u32, e: impl std::fmt::Debug) -> String {
    format!(
        "<svg width=\"{w}\" height=\"{h}\"><text x=\"10\" y=\"20\">plot failed: {}</text></svg>",
        format!("{e:?}")
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    )
}

/// Whether the categories' values span more than a decade: one shared
/// linear axis would then flatten the small ones to the floor, so each
/// category gets a panel and a scale of its own.
fn spans_decades(series: &[Series], bound: Option<&Bound>, n: usize) -> bool {
    let tops: Vec<f64> = (0..n)
        .map(|ci| top_of(series, bound, ci))
        .filter(|t| *t > 0.0)
        .collect();
    let (lo, hi) = tops
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
    tops.len() > 1 && hi / lo > 10.0
}

/// The largest value drawn in category `ci`: medians, CI ends, runs,
/// claims and the bound.
fn top_of(series: &[Series], bound: Option<&Bound>, ci: usize) -> f64 {
    series
        .iter()
        .filter_map(|s| s.points.get(ci).and_then(Option::as_ref))
        .flat_map(|p| {
            std::iter::once(p.median)
                .chain(p.ci.map(|c| c.1))
                .chain(p.samples.iter().copied())
                .chain(p.claimed)
        })
        .chain(bound.and_then(|b| b.values.get(ci).copied().flatten()))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
}

/// Medians with the bootstrap interval of each as an error bar, the
/// single repetitions as small rings and the mail's claim as a cross, per
/// category and variant. Categories whose values span decades are drawn
/// as small multiples, each on its own scale.
pub fn medians(
    title: &str,
    y_desc: &str,
    x_desc: &str,
    categories: &[String],
    series: &[Series],
    bound: Option<&Bound>,
) -> String {
    let n = categories.len().max(1);
    let panels = spans_decades(series, bound, categories.len());
    let w = if panels {
        (80 + 170 * n as u32).clamp(560, 1400)
    } else {
        (160 + 110 * n as u32).clamp(560, 960)
    };
    render(w, 360, |svg, size| {
        let root = SVGBackend::with_string(svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        if !panels {
            let all: Vec<usize> = (0..categories.len()).collect();
            draw_panel(
                &root,
                title,
                (y_desc, x_desc),
                categories,
                &all,
                series,
                bound,
                true,
            )?;
        } else {
            let (head, body) = root.split_vertically(28);
            head.titled(title, (FONT, 16))?;
            let areas = body.split_evenly((1, categories.len()));
            for (ci, area) in areas.iter().enumerate() {
                let y = if ci == 0 { y_desc } else { "" };
                draw_panel(
                    area,
                    "",
                    (y, x_desc),
                    categories,
                    &[ci],
                    series,
                    bound,
                    ci == 0,
                )?;
            }
        }
        root.present()?;
        Ok(())
    })
}

type Area<'a, 'b> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One chart of the categories `which` on `area`, on a linear axis from
/// 0 to above their largest value.
#[allow(clippy::too_many_arguments)]
fn draw_panel(
    area: &Area<'_, '_>,
    title: &str,
    (y_desc, x_desc): (&str, &str),
    categories: &[String],
    which: &[usize],
    series: &[Series],
    bound: Option<&Bound>,
    legend: bool,
) -> Res {
    let n = which.len().max(1);
    let top = which
        .iter()
        .map(|ci| top_of(series, bound, *ci))
        .fold(0.0f64, f64::max);
    // Headroom for the legend in the upper left.
    let top = if top > 0.0 {
        top * if legend { 1.3 } else { 1.15 }
    } else {
        1.0
    };
    let mut builder = ChartBuilder::on(area);
    if !title.is_empty() {
        builder.caption(title, (FONT, 16));
    }
    let mut chart = builder
        .margin(14)
        .margin_right(24)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)?;
    let cats: Vec<String> = which.iter().map(|ci| categories[*ci].clone()).collect();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
            cats[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&label)
        .y_labels(6)
        .y_label_formatter(&|y| tick(*y))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE)
        .draw()?;
    let k = series.len().max(1) as f64;
    let band = 0.6;
    let mut any_claim = false;
    for (si, s) in series.iter().enumerate() {
        let color = PALETTE[s.color % PALETTE.len()];
        let offset = if k > 1.0 {
            -band / 2.0 + band * si as f64 / (k - 1.0)
        } else {
            0.0
        };
        let cap = (band / k / 3.0).min(0.08);
        let mut shapes: Vec<PathElement<(f64, f64)>> = Vec::new();
        let mut rings = Vec::new();
        let mut dots = Vec::new();
        for (x0, ci) in which.iter().enumerate() {
            let Some(p) = s.points.get(*ci).and_then(Option::as_ref) else {
                continue;
            };
            let x = x0 as f64 + offset;
            if let Some((lo, hi)) = p.ci {
                let st = color.stroke_width(2);
                shapes.push(PathElement::new(vec![(x, lo), (x, hi)], st));
                shapes.push(PathElement::new(vec![(x - cap, lo), (x + cap, lo)], st));
                shapes.push(PathElement::new(vec![(x - cap, hi), (x + cap, hi)], st));
            }
            if let Some(c) = p.claimed {
                // The claim: a cross beside the measured median.
                let st = color.stroke_width(2);
                let (dx, dy) = (0.05, top * 0.015);
                let cx = x + 2.5 * cap;
                shapes.push(PathElement::new(
                    vec![(cx - dx, c - dy), (cx + dx, c + dy)],
                    st,
                ));
                shapes.push(PathElement::new(
                    vec![(cx - dx, c + dy), (cx + dx, c - dy)],
                    st,
                ));
                any_claim = true;
            }
            for v in &p.samples {
                rings.push(Circle::new((x, *v), 3, color.mix(0.7).stroke_width(1)));
            }
            dots.push(Circle::new((x, p.median), 5, color.filled()));
        }
        chart.draw_series(shapes)?;
        chart.draw_series(rings)?;
        chart
            .draw_series(dots)?
            .label(s.name.clone())
            .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
    }
    let ink = RGBColor(60, 60, 60);
    if any_claim {
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
            .label("claimed (x)")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x + 3, y - 4), (x + 11, y + 4)], ink.stroke_width(2))
            });
    }
    if let Some(b) = bound {
        let bars: Vec<PathElement<(f64, f64)>> = which
            .iter()
            .enumerate()
            .filter_map(|(x0, ci)| {
                let x = x0 as f64;
                let v = b.values.get(*ci).copied().flatten()?;
                Some(PathElement::new(
                    vec![(x - 0.45, v), (x + 0.45, v)],
                    ink.stroke_width(2),
                ))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(format!("bound: {}", b.name))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], ink.stroke_width(2)));
    }
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font((FONT, 13))
            .draw()?;
    }
    Ok(())
}

/// An axis tick without trailing zeros: `20`, `2.5`.
fn tick(v: f64) -> String {
    let s = super::numbers::value(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Percentile → x on a "nines" scale: 90 → 1, 99 → 2, 99.9 → 3.
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

fn nines_label(x: f64) -> String {
    let i = x.round();
    if (x - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    match i as i32 {
        0 => "0".into(),
        k => {
            let p = 100.0 * (1.0 - 10f64.powi(-k));
            let decimals = (k - 2).max(0) as usize;
            format!("p{p:.decimals$}")
        }
    }
}

/// Completion latency against percentile, one line per variant.
pub fn latency(
    title: &str,
    y_desc: &str,
    scale: f64,
    series: &[(String, usize, Vec<[f64; 2]>)],
) -> String {
    render(560, 340, |svg, size| {
        draw_latency(svg, size, title, y_desc, scale, series)
    })
}

fn draw_latency(
    svg: &mut String,
    size: (u32, u32),
    title: &str,
    y_desc: &str,
    scale: f64,
    series: &[(String, usize, Vec<[f64; 2]>)],
) -> Res {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let pts: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|(_, _, p)| {
            p.iter()
                .filter(|[pct, _]| *pct < 100.0 && *pct >= 0.0)
                .map(|[pct, ns]| (nines(*pct), ns / scale))
                .collect()
        })
        .collect();
    let max_x = pts
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(2.0f64, f64::max)
        .ceil();
    let top = pts.iter().flatten().map(|p| p.1).fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.3 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, 15))
        .margin(14)
        .margin_right(30)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..max_x, 0f64..top)?;
    chart
        .configure_mesh()
        .x_labels(max_x as usize + 1)
        .x_label_formatter(&|x| nines_label(*x))
        .y_labels(6)
        .y_label_formatter(&|y| tick(*y))
        .x_desc("percentile")
        .y_desc(y_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE)
        .draw()?;
    for ((name, ci, _), p) in series.iter().zip(&pts) {
        let color = PALETTE[ci % PALETTE.len()];
        chart.draw_series(std::iter::once(PathElement::new(
            p.clone(),
            color.stroke_width(2),
        )))?;
        chart
            .draw_series(p.iter().map(|xy| Circle::new(*xy, 3, color.filled())))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, 13))
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_svg_with_text_and_no_url() {
        let s = medians(
            "t <&>",
            "ms",
            "delay",
            &["1".into(), "2".into()],
            &[Series {
                name: "before".into(),
                color: 0,
                points: vec![
                    Some(Point {
                        median: 10.0,
                        ci: Some((9.9, 10.1)),
                        samples: vec![9.9, 10.0, 10.1],
                        claimed: Some(9.97),
                    }),
                    None,
                ],
            }],
            None,
        );
        assert!(s.starts_with("<svg"), "{s}");
        assert!(s.contains("<text") && s.contains("before"), "{s}");
        assert!(s.contains("t &lt;&amp;&gt;"));
        assert!(!s.contains("http"));
        let l = latency(
            "lat",
            "ms",
            1e6,
            &[("a".into(), 0, vec![[50.0, 1e6], [99.0, 2e6], [99.9, 3e6]])],
        );
        assert!(l.contains("<svg") && l.contains("p99.9"), "{l}");
    }

    #[test]
    fn a_bound_is_drawn_and_named_in_the_legend() {
        let series = [Series {
            name: "6.12".into(),
            color: 0,
            points: vec![Some(Point {
                median: 700.0,
                ci: None,
                samples: vec![],
                claimed: None,
            })],
        }];
        let plain = medians("iops", "IOPS", "delay", &["1".into()], &series, None);
        let b = Bound {
            name: "iops.bound".into(),
            values: vec![Some(1000.0)],
        };
        let s = medians("iops", "IOPS", "delay", &["1".into()], &series, Some(&b));
        assert!(s.contains("bound: iops.bound"), "{s}");
        assert!(!plain.contains("bound"));
    }

    /// Rows from 50 to 18k IOPS: each gets its own panel and scale, so
    /// the small ones are not flattened to the floor; the claims show.
    #[test]
    fn rows_that_span_decades_get_a_scale_each() {
        let pt = |m: f64, c: f64| {
            Some(Point {
                median: m,
                ci: Some((m * 0.98, m * 1.02)),
                samples: vec![m],
                claimed: Some(c),
            })
        };
        let series = [Series {
            name: "kthread".into(),
            color: 0,
            points: vec![pt(970.0, 1000.0), pt(50.0, 50.0), pt(18000.0, 13300.0)],
        }];
        let cats: Vec<String> = ["1,write".into(), "10,read".into(), "10,async".into()].to_vec();
        assert!(spans_decades(&series, None, 3));
        let s = medians("iops", "IOPS", "delay,job", &cats, &series, None);
        assert!(s.contains("claimed (x)"), "{s}");
        for c in &cats {
            assert!(s.contains(c.as_str()), "{c}");
        }
        // Three panels, three y axes: a tick near each row's own values.
        let tick = |t: &str| s.lines().any(|l| l.trim() == t);
        assert!(tick("50") && tick("1000") && tick("20000"), "{s}");
        let close = [Series {
            name: "a".into(),
            color: 0,
            points: vec![pt(970.0, 1000.0), pt(500.0, 500.0)],
        }];
        assert!(!spans_decades(&close, None, 2));
    }

    #[test]
    fn nines_scale() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines_label(2.0), "p99");
        assert_eq!(nines_label(0.0), "0");
        assert_eq!(nines_label(0.5), "");
    }
}
