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

/// Medians with the bootstrap interval of each as an error bar, and the
/// single repetitions as small rings, per category and variant.
pub fn medians(
    title: &str,
    y_desc: &str,
    x_desc: &str,
    categories: &[String],
    series: &[Series],
    bound: Option<&Bound>,
) -> String {
    let n = categories.len().max(1);
    let w = (160 + 110 * n as u32).clamp(560, 960);
    render(w, 360, |svg, size| {
        draw_medians(
            svg,
            size,
            title,
            (y_desc, x_desc),
            categories,
            series,
            bound,
        )
    })
}

fn draw_medians(
    svg: &mut String,
    size: (u32, u32),
    title: &str,
    (y_desc, x_desc): (&str, &str),
    categories: &[String],
    series: &[Series],
    bound: Option<&Bound>,
) -> Res {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let n = categories.len().max(1);
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().flatten())
        .flat_map(|p| {
            std::iter::once(p.median)
                .chain(p.ci.map(|c| c.1))
                .chain(p.samples.iter().copied())
        })
        .chain(
            bound
                .iter()
                .flat_map(|b| b.values.iter().flatten().copied()),
        )
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    // Headroom for the legend in the upper left.
    let top = if top > 0.0 { top * 1.3 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, 16))
        .margin(14)
        .margin_right(24)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)?;
    let cats = categories.to_vec();
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
        for (ci, p) in s.points.iter().enumerate() {
            let Some(p) = p else { continue };
            let x = ci as f64 + offset;
            if let Some((lo, hi)) = p.ci {
                let st = color.stroke_width(2);
                shapes.push(PathElement::new(vec![(x, lo), (x, hi)], st));
                shapes.push(PathElement::new(vec![(x - cap, lo), (x + cap, lo)], st));
                shapes.push(PathElement::new(vec![(x - cap, hi), (x + cap, hi)], st));
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
    if let Some(b) = bound {
        let ink = RGBColor(60, 60, 60);
        let bars: Vec<PathElement<(f64, f64)>> = b
            .values
            .iter()
            .enumerate()
            .filter_map(|(ci, v)| {
                let x = ci as f64;
                v.map(|v| PathElement::new(vec![(x - 0.45, v), (x + 0.45, v)], ink.stroke_width(2)))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(format!("bound: {}", b.name))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], ink.stroke_width(2)));
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

    #[test]
    fn nines_scale() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines_label(2.0), "p99");
        assert_eq!(nines_label(0.0), "0");
        assert_eq!(nines_label(0.5), "");
    }
}
