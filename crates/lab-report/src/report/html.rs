//! One self-contained HTML page: styles inline, plots as inline SVG, no
//! script, no external reference.

use super::plot::{self, Point, Series};
use super::text::{self, Rows};
use super::{Group, MetricInfo, Report};
use anyhow::Result;
use minijinja::value::Serde;
use serde::Serialize;

#[derive(Serialize)]
struct HtmlTable {
    headers: Vec<String>,
    right: Vec<bool>,
    rows: Vec<HtmlRow>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct HtmlRow {
    cells: Vec<String>,
    class: String,
}

impl From<Rows> for HtmlTable {
    fn from(r: Rows) -> HtmlTable {
        HtmlTable {
            headers: r.cols.iter().map(|c| c.header.clone()).collect(),
            right: r.cols.iter().map(|c| c.right).collect(),
            rows: r
                .rows
                .into_iter()
                .zip(r.classes)
                .map(|(cells, class)| HtmlRow {
                    cells,
                    class: class.to_string(),
                })
                .collect(),
            notes: r.notes.lines(),
        }
    }
}

#[derive(Serialize)]
struct MetricView {
    heading: String,
    svg: String,
    table: HtmlTable,
}

#[derive(Serialize)]
struct LatencyView {
    svg: String,
}

#[derive(Serialize)]
struct ConfigView {
    config: String,
    metrics: Vec<MetricView>,
    latency: Vec<LatencyView>,
}

#[derive(Serialize)]
struct ClaimHtml {
    heading: String,
    about: Vec<String>,
    table: HtmlTable,
}

#[derive(Serialize)]
struct Legend {
    name: String,
    color: String,
}

fn metric_plot(r: &Report, config: &str, groups: &[&Group], m: &MetricInfo) -> String {
    let categories: Vec<String> = groups.iter().map(|g| text::key_value(g)).collect();
    let series: Vec<Series> = r
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| Series {
            name: v.name.clone(),
            color: i,
            points: groups
                .iter()
                .map(|g| {
                    let cell = g.cells.iter().find(|c| c.variant == v.name)?;
                    let s = cell.metrics.iter().find(|x| x.metric == m.name)?;
                    let sm = s.summary?;
                    let median = sm.median / m.scale;
                    // A claim's ratio is measured over claimed in its own
                    // unit, so the claim in the plot's unit is median / ratio.
                    let claimed = r
                        .claims
                        .iter()
                        .find(|c| c.cell.as_deref() == Some(&cell.cell) && c.metric == m.name)
                        .and_then(|c| c.ratio)
                        .filter(|q| q.is_finite() && *q > 0.0)
                        .map(|q| median / q);
                    Some(Point {
                        median,
                        ci: s.median_ci.map(|[a, b]| (a / m.scale, b / m.scale)),
                        samples: s.samples.iter().map(|x| x / m.scale).collect(),
                        claimed,
                    })
                })
                .collect(),
        })
        .filter(|s| s.points.iter().any(Option::is_some))
        .collect();
    let title = if config.is_empty() {
        format!("{}: median, 95% CI, runs", m.name)
    } else {
        format!("{}, {config}", m.name)
    };
    let y = if m.display_unit.is_empty() {
        m.name.clone()
    } else {
        format!("{} ({})", m.name, m.display_unit)
    };
    let bound = m.bound.as_ref().map(|b| plot::Bound {
        name: b.clone(),
        values: groups
            .iter()
            .map(|g| g.any_median(b).map(|v| v / m.scale))
            .collect(),
    });
    plot::medians(
        &title,
        &y,
        &text::key_header(groups),
        &categories,
        &series,
        bound.as_ref(),
    )
}

fn latency_plots(r: &Report, groups: &[&Group]) -> Vec<LatencyView> {
    // Latencies are shown in the unit of the first time metric, or one
    // chosen from the percentiles themselves.
    let mut out = Vec::new();
    for g in groups {
        let mut dirs: Vec<&String> = g.latency.iter().map(|l| &l.dir).collect();
        dirs.dedup();
        for dir in dirs {
            let ls: Vec<_> = g.latency.iter().filter(|l| &l.dir == dir).collect();
            let (unit, scale) = super::numbers::display_unit(
                "ns",
                ls.iter().flat_map(|l| l.points.iter().map(|p| p[1])),
            );
            // Keep colors per variant as in the metric plots.
            let mut series = Vec::new();
            for (i, v) in r.variants.iter().enumerate() {
                if let Some(l) = ls.iter().find(|l| l.variant == v.name) {
                    series.push((v.name.clone(), i, l.points.clone()));
                }
            }
            let title = format!("{dir} clat, {}", g.id);
            out.push(LatencyView {
                svg: plot::latency(&title, &format!("latency ({unit})"), scale, &series),
            });
        }
    }
    out
}

pub fn render(r: &Report) -> Result<String> {
    let mut configs = Vec::new();
    for (config, groups) in text::by_config(r) {
        let metrics = r
            .metrics
            .iter()
            .map(|m| MetricView {
                heading: text::metric_heading(m, &config),
                svg: metric_plot(r, &config, &groups, m),
                table: text::detail_rows(r, &groups, m).into(),
            })
            .collect();
        configs.push(ConfigView {
            latency: latency_plots(r, &groups),
            config,
            metrics,
        });
    }
    let claims: Vec<ClaimHtml> = text::claim_rows(r)
        .into_iter()
        .map(|c| ClaimHtml {
            heading: c.heading,
            about: c.about,
            table: c.rows.into(),
        })
        .collect();
    let legend: Vec<Legend> = r
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| Legend {
            name: v.name.clone(),
            color: plot::color_hex(i),
        })
        .collect();
    let ctx = minijinja::context! {
        report => Serde(r),
        title => r.title.clone(),
        method => text::method_lines(r),
        outcome => text::outcome_line(r),
        configs => Serde(configs),
        claims => Serde(claims),
        legend => Serde(legend),
        aa => text::aa_lines(r),
        incomplete => text::incomplete_lines(r),
        complete => r.completeness.complete() && r.problems.is_empty(),
        provenance => Serde(text::provenance_lines(r)),
    };
    Ok(text::env().get_template("report.html")?.render(ctx)?)
}
