//! Claims in a matrix: checking their definitions, and binding each
//! claimed value of a mail's table to the cells and metric measuring it.
//!
//! Pure: the tables come in as [`ClaimTable`]s, already read from their
//! mails, so `lab claims check`, `lab run` and the report bind the same
//! way and tests need no files.

use super::schema::{ClaimDef, ClaimSourceDef, CommandMetricDef, Loc, RowsDef, Scalar, Workload};
use super::{CellSpec, Matrix, Plan, err_at};
use crate::mail::{ClaimTable, Unit, UnitKind, Value};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A `rows: metric` map value for a row that is no claim (`bios
/// submitted`: lab measures no such thing); its values bind to nothing.
pub const SKIP: &str = "-";

/// Condition keys that need no axis: the report reads them from the
/// kernel build and the guest.
const CONDITION_KEYS: [&str; 3] = ["arch", "hz", "clocksource"];

/// Where a claim's errors point: its first key that has a place in the
/// file (the tolerance may be the default, which has none).
fn anchor(c: &ClaimDef) -> &Loc<String> {
    [
        Some(&c.tolerance),
        c.metric.as_ref(),
        c.unit.as_ref(),
        c.from_variant.as_ref(),
        c.row_axis.as_ref(),
        c.group_axis.as_ref(),
        c.column_axis.as_ref(),
    ]
    .into_iter()
    .flatten()
    .find(|l| l.referenced.line() > 0)
    .unwrap_or(&c.tolerance)
}

/// Plan-time checks of every claim: axes, variants, metrics, units,
/// tolerance, table index and condition keys, with file:line:col.
pub(super) fn check(m: &Matrix) -> Result<()> {
    let axes = m.all_axis_names();
    let commands = command_metrics(m);
    for (i, c) in m.claims.iter().enumerate() {
        check_one(m, &axes, &commands, i, c)?;
    }
    Ok(())
}

/// One claim's checks; `i` counts from 0, as the errors name it.
fn check_one(
    m: &Matrix,
    axes: &[String],
    commands: &[CommandMetricDef],
    i: usize,
    c: &ClaimDef,
) -> Result<()> {
    let path = m.path.as_path();
    let at = |loc: &Loc<String>, msg: String| err_at(path, loc, format!("claims[{i}]: {msg}"));
    crate::units::parse_percent(&c.tolerance.value).map_err(|e| {
        at(
            &c.tolerance,
            format!("tolerance '{}': {e}", c.tolerance.value),
        )
    })?;
    if c.table.value == 0 {
        return Err(err_at(
            path,
            &c.table,
            format!("claims[{i}]: table counts from 1"),
        ));
    }
    let anchor = anchor(c);
    for (label, v) in &c.row_variants {
        if m.variant(v).is_none() {
            return Err(at(
                anchor,
                format!("row_variants: '{label}' maps to '{v}', which is not a variant"),
            ));
        }
    }
    if let Some(v) = &c.from_variant
        && m.variant(&v.value).is_none()
    {
        return Err(at(
            v,
            format!("from_variant '{}' is not a variant", v.value),
        ));
    }
    if let Some(ClaimSourceDef::Mail { mail }) = &c.source {
        let f = m.path.parent().unwrap_or(Path::new(".")).join(mail);
        if !f.is_file() {
            return Err(at(
                anchor,
                format!("source mail {} does not exist", f.display()),
            ));
        }
    }
    let axis_ok = |a: &Loc<String>, what: &str| -> Result<()> {
        if axes.iter().any(|x| x == &a.value) && a.value != "variant" {
            Ok(())
        } else {
            Err(at(
                a,
                format!(
                    "{what} '{}' is not an axis of the matrix ({})",
                    a.value,
                    axes.join(", ")
                ),
            ))
        }
    };
    for a in c.row_axis.iter().chain(&c.row_axes) {
        axis_ok(a, "row axis")?;
    }
    // `group_axis: variant`: the group headers are the variants
    // (`Base:` over some rows, `Patched:` over the others).
    if let Some(a) = c.group_axis.as_ref().filter(|a| a.value != "variant") {
        axis_ok(a, "group_axis")?;
    }
    if let Some(a) = &c.column_axis {
        axis_ok(a, "column_axis")?;
    }
    check_shape(m, c, &at)?;
    check_metrics(c, i, commands, &at)?;
    for (k, v) in &c.conditions {
        if !CONDITION_KEYS.contains(&k.as_str()) && !axes.contains(k) {
            return Err(err_at(
                path,
                v,
                format!(
                    "claims[{i}]: unknown condition key '{k}': use an axis ({}) or {}",
                    axes.join(", "),
                    CONDITION_KEYS.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// What the rows and the columns of the claim's table are: one way of
/// saying the rows, and columns that are variants or an axis.
fn check_shape(
    m: &Matrix,
    c: &ClaimDef,
    at: &dyn Fn(&Loc<String>, String) -> anyhow::Error,
) -> Result<()> {
    let anchor = anchor(c);
    let row_shapes = usize::from(c.row_axis.is_some())
        + usize::from(!c.row_axes.is_empty())
        + usize::from(c.rows.is_some());
    // None: a one-row claim without keys, such as a sentence's.
    if row_shapes > 1 {
        return Err(at(
            anchor,
            "say what the rows are with one of row_axis, row_axes or rows: variant|metric|run"
                .into(),
        ));
    }
    let rows_are = c.rows.as_ref().map(|r| r.value);
    if c.column_axis.is_none() {
        // `before: 182k IOPS` / `after: 241k IOPS`: the rows are the
        // variants and the one column is the value.
        if rows_are == Some(RowsDef::Variant) && !c.columns.is_empty() {
            return Err(at(
                anchor,
                "rows: variant takes column_axis (the columns are axis values) or no columns"
                    .into(),
            ));
        }
        if c.columns.is_empty() && rows_are != Some(RowsDef::Variant) {
            return Err(at(
                anchor,
                "columns is empty: map each table column to a variant, or set column_axis".into(),
            ));
        }
        for (col, v) in &c.columns {
            if m.variant(v).is_none() {
                return Err(at(
                    anchor,
                    format!("column '{col}' maps to '{v}', which is not a variant"),
                ));
            }
        }
    }
    Ok(())
}

/// The claimed metrics exist, and the claimed unit can measure them.
fn check_metrics(
    c: &ClaimDef,
    i: usize,
    commands: &[CommandMetricDef],
    at: &dyn Fn(&Loc<String>, String) -> anyhow::Error,
) -> Result<()> {
    let anchor = anchor(c);
    let rows_are = c.rows.as_ref().map(|r| r.value);
    let mut metrics: Vec<&String> = Vec::new();
    match (rows_are, &c.metric) {
        (Some(RowsDef::Metric), _) => {
            if c.metrics.is_empty() {
                return Err(at(
                    anchor,
                    "rows: metric needs metrics: a map from row label to metric".into(),
                ));
            }
            metrics.extend(c.metrics.values().filter(|m| *m != SKIP));
        }
        // `metrics:` beside other rows maps columns to metrics: a
        // table of `IOPS` and `sys` columns for one variant.
        (_, Some(metric)) => {
            metrics.push(&metric.value);
            metrics.extend(c.metrics.values().filter(|m| *m != SKIP));
        }
        (_, None) if !c.metrics.is_empty() => {
            metrics.extend(c.metrics.values().filter(|m| *m != SKIP));
        }
        (_, None) => return Err(at(anchor, "no metric: say which metric is claimed".into())),
    }
    let metric_anchor = c.metric.as_ref().unwrap_or(anchor);
    for name in metrics {
        let Some(mu) = metric_unit(name, commands) else {
            return Err(at(
                metric_anchor,
                format!(
                    "unknown metric '{name}': fio gives read|write|trim|sync.lat|clat_mean|p50|p90|p95|p99|p99_9, .iops, .ios, .bw|bw_kb|bw_kib|bw_mb|bw_mib and cpu.usr|sys|ctx, each also as JOB.NAME; a command workload, derived: and perf: name their own"
                ),
            ));
        };
        if let Some(u) = &c.unit {
            let Some(cu) = parse_unit(&u.value) else {
                return Err(at(u, format!("unknown unit '{}'", u.value)));
            };
            if cu.kind != mu.kind {
                return Err(at(u, unit_mismatch(i + 1, &cu, name, &mu)));
            }
        }
    }
    Ok(())
}

/// The error for a claimed unit that cannot measure a metric.
pub fn unit_mismatch(claim: usize, claimed: &Unit, metric: &str, metric_unit: &Unit) -> String {
    format!(
        "claim {claim}: its unit {} ({}) cannot measure {metric}, which is in {} ({})",
        claimed.symbol,
        kind_name(claimed.kind),
        metric_unit.symbol,
        kind_name(metric_unit.kind)
    )
}

fn kind_name(k: UnitKind) -> &'static str {
    match k {
        UnitKind::Time => "a time",
        UnitKind::Throughput => "a throughput",
        UnitKind::Rate => "a rate",
        UnitKind::Percent => "a percentage",
        UnitKind::Count => "a count",
        UnitKind::Frequency => "a frequency",
        UnitKind::Size => "a size",
        UnitKind::Ratio => "a ratio",
    }
}

/// The metrics the matrix itself defines, with their units: a command
/// workload's, the derived metrics (`cpu.total`, `bw.total`) and the
/// perf counters (`perf.context-switches`). A claim may bind to each.
pub fn command_metrics(m: &Matrix) -> Vec<CommandMetricDef> {
    let def = |name: String, unit: &str| CommandMetricDef {
        name,
        regex: String::new(),
        unit: unit.to_string(),
        scale: None,
    };
    let derived = m.derived.iter().map(|d| def(d.name.clone(), &d.unit));
    let perf = m.perf.iter().flat_map(|p| &p.events).map(|e| {
        // perf stat counts events; the clocks it gives in msec.
        let unit = if e.ends_with("-clock") {
            "msec"
        } else {
            "count"
        };
        def(format!("perf.{e}"), unit)
    });
    workload_metrics(m)
        .into_iter()
        .chain(derived)
        .chain(perf)
        .collect()
}

/// The metrics a command workload defines, with their units.
fn workload_metrics(m: &Matrix) -> Vec<CommandMetricDef> {
    let inline = match &m.workload {
        Some(super::schema::WorkloadRef::Inline(w)) => Some(w),
        _ => None,
    };
    inline
        .into_iter()
        .chain(m.workloads.iter().map(|(_, w)| w))
        .filter_map(|w| match w {
            Workload::Command(c) => Some(c.metrics.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The unit a metric is stored in, from its name: fio's latencies in ns,
/// bandwidth in B/s, IOPS, counts and CPU percent; a command's metric in
/// the unit its definition names. None for a metric lab never stores.
pub fn metric_unit(metric: &str, commands: &[CommandMetricDef]) -> Option<Unit> {
    if let Some(c) = commands.iter().find(|c| c.name == metric) {
        // A command's own unit word (`pages`) counts things, as does none.
        return parse_unit(&c.unit).or_else(|| {
            Some(match c.unit.trim() {
                "" => crate::units::count_unit(""),
                word => Unit {
                    written: String::new(),
                    symbol: word.to_string().into(),
                    kind: UnitKind::Count,
                    scale: 1.0,
                },
            })
        });
    }
    // fio's names have one table, the one derived metrics use: every
    // bandwidth unit, every percentile fio reports, per-job prefixes.
    let symbol = super::derived::fio_metric_unit(metric)?;
    parse_unit(symbol)
}

/// A unit as a matrix or a stored metric writes it: the one table,
/// `units::parse_unit`.
pub use crate::units::parse_unit;

/// What one table value was bound to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// These cells measure it, on the binding's metric.
    Cells(Vec<String>),
    /// `N/A` in the mail, and no such cell in the plan: as claimed.
    Excluded,
    /// `N/A` in the mail, yet the plan measures these cells.
    NotApplicable(Vec<String>),
    /// Nothing measures it; the reason says why.
    Unbound(String),
    /// Its unit cannot measure the metric (MB/s against a latency): an
    /// error in the claim, naming both units.
    WrongUnit(String),
}

/// One claimed value and what it binds to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    /// The claim's position in the matrix, from 1.
    pub claim: usize,
    /// The row's keys, joined: `8 / 1`.
    pub row: String,
    /// The names of the key columns, joined: `threads / io_poll`.
    pub row_keys: String,
    pub column: String,
    /// Where the value sits in its table.
    pub row_index: usize,
    pub column_index: usize,
    /// The axis values the row and column stand for, `variant` included.
    pub axes: Vec<(String, String)>,
    pub metric: String,
    /// The value as written; None for `N/A`.
    pub claimed: Option<f64>,
    /// The claimed unit's symbol; the metric's when the mail names none.
    pub unit: String,
    /// Factor from the metric's stored unit to the claimed unit.
    pub from_stored: f64,
    pub target: Target,
}

/// The row and column of one value: what they stand for.
#[derive(Default, Clone)]
struct Coords {
    axes: Vec<(String, String)>,
    metric: Option<String>,
}

/// Every value of `table` bound to the cells of `plan` by claim `n`
/// (from 1) of the matrix. `commands` names the units of a command
/// workload's metrics. Never fails: a value that binds to nothing is
/// [`Target::Unbound`] with its reason.
pub fn bind(
    n: usize,
    def: &ClaimDef,
    table: &ClaimTable,
    plan: &Plan,
    commands: &[CommandMetricDef],
) -> Vec<Binding> {
    let mut out = Vec::new();
    let key_names = table.key_columns.join(" / ");
    for (ri, row) in table.rows.iter().enumerate() {
        if is_reference(def, &row.keys) {
            continue;
        }
        let row_coords = row_coords(def, table, &row.keys, plan);
        for (ci, value) in row.values.iter().enumerate() {
            let Some(column) = table.columns.get(ci) else {
                continue;
            };
            let claimed = match value {
                Value::Number { value, .. } => Some(*value),
                Value::NotApplicable => None,
                Value::Missing => continue,
            };
            let col_coords = column_coords(def, &column.name);
            let mut b = Binding {
                claim: n,
                row: row.keys.join(" / "),
                row_keys: key_names.clone(),
                column: column.name.clone(),
                row_index: ri,
                column_index: ci,
                axes: vec![],
                metric: String::new(),
                claimed,
                unit: String::new(),
                from_stored: 1.0,
                target: Target::Unbound(String::new()),
            };
            let coords = match (&row_coords, col_coords) {
                (Err(e), _) => Err(e.clone()),
                (_, Err(e)) => Err(e),
                // The column is not part of the claim: not a claimed value.
                (Ok(_), Ok(None)) => continue,
                (Ok(r), Ok(Some(c))) => Ok(merge(r, &c)),
            };
            let coords = match coords {
                Ok(c) => c,
                Err(e) => {
                    b.target = Target::Unbound(e);
                    out.push(b);
                    continue;
                }
            };
            let mut axes = coords.axes;
            if !axes.iter().any(|(a, _)| a == "variant")
                && let Some(v) = &def.from_variant
            {
                axes.push(("variant".into(), v.value.clone()));
            }
            b.axes = axes;
            let column_metric = (def.rows.as_ref().map(|r| r.value) != Some(RowsDef::Metric))
                .then(|| def.metrics.get(&column.name).cloned())
                .flatten();
            if column_metric.as_deref() == Some(SKIP) {
                continue;
            }
            let Some(metric) = coords
                .metric
                .or(column_metric)
                .or(def.metric.as_ref().map(|m| m.value.clone()))
            else {
                b.target = Target::Unbound("no metric for this row".into());
                out.push(b);
                continue;
            };
            b.metric = metric.clone();
            match units(def, table, row, ci, &metric, commands) {
                Ok((symbol, factor)) => {
                    b.unit = symbol;
                    b.from_stored = factor;
                }
                Err(e) => {
                    b.target = Target::WrongUnit(format!("claim {n}: {e}"));
                    out.push(b);
                    continue;
                }
            }
            // A condition on an axis the plan has selects the cells (a
            // table measured at `delay: 1` binds to the delay=1 cells);
            // arch, hz and clocksource are judged on the measured cells.
            for (k, v) in &def.conditions {
                let on_axis = !CONDITION_KEYS.contains(&k.as_str())
                    && plan.cells.iter().any(|c| c.axes.get(k).is_some())
                    && !b.axes.iter().any(|(a, _)| a == k);
                if on_axis {
                    b.axes.push((k.clone(), condition_text(v)));
                }
            }
            // `READ: bw=` is no write job's bandwidth: a metric of one
            // direction binds only to cells whose job moves data that way.
            let (cells, wrong_way): (Vec<&CellSpec>, Vec<&CellSpec>) = plan
                .cells
                .iter()
                .filter(|c| {
                    b.axes.iter().all(|(a, v)| {
                        c.axes
                            .get(a)
                            .is_some_and(|have| same_value(&have.to_string(), v))
                    })
                })
                .partition(|c| measures_direction(c, &metric));
            let ids = |cs: Vec<&CellSpec>| cs.into_iter().map(|c| c.id.clone()).collect::<Vec<_>>();
            let (cells, wrong_way) = (ids(cells), ids(wrong_way));
            b.target = match (claimed.is_some(), cells.is_empty()) {
                (true, true) if !wrong_way.is_empty() => Target::Unbound(format!(
                    "{metric}: the job of {} does not {}",
                    wrong_way.join(", "),
                    metric.split('.').next().unwrap_or("")
                )),
                (true, false) => Target::Cells(cells),
                (true, true) => {
                    Target::Unbound(format!("no cell of the plan has {}", label(&b.axes)))
                }
                (false, true) => Target::Excluded,
                (false, false) => Target::NotApplicable(cells),
            };
            out.push(b);
        }
    }
    out
}

/// Whether a cell's fio job moves data in the direction `metric` names
/// (`read.bw`: a job that reads). A cell with no fio job, a job whose
/// direction is not plain to see, or a metric of no direction
/// (`cpu.sys`, a command's) measures it as far as lab can tell.
fn measures_direction(cell: &CellSpec, metric: &str) -> bool {
    let Some(want) = metric
        .split_once('.')
        .map(|(d, _)| d)
        .filter(|d| matches!(*d, "read" | "write" | "trim"))
    else {
        return true;
    };
    // Only a job whose direction is plain to see: `rw` (or fio's
    // default read), no free options, no second job.
    let rw = match &cell.workload {
        Some(Workload::Fio(f))
            if f.options.is_none()
                && f.jobs.is_empty()
                && f.beside.is_empty()
                && !f.extra.contains_key("readwrite") =>
        {
            f.rw.as_ref().map_or("read".to_string(), |r| r.to_string())
        }
        _ => return true,
    };
    let dir = super::schema::fio_direction(&rw);
    dir == want || (dir == "both" && want != "trim")
}

/// Whether a row is a bound or a reference, not anyone's measurement
/// ("Theoretical maximum", "line rate"): the claim maps its label to
/// `-`, in `aliases` or, for `rows: metric`, in `metrics`.
fn is_reference(def: &ClaimDef, keys: &[String]) -> bool {
    let Some(k) = keys.last() else { return false };
    let same = |l: &String| l.trim().eq_ignore_ascii_case(k.trim());
    // In a metrics map, a label may carry its section (`read slat min`).
    let sectioned = keys
        .len()
        .checked_sub(2)
        .map(|i| format!("{} {}", keys[i].trim(), k.trim()));
    let same_in_map = |l: &String| {
        same(l)
            || sectioned
                .as_deref()
                .is_some_and(|s| l.trim().eq_ignore_ascii_case(s))
    };
    let in_metrics = def.rows.as_ref().map(|r| r.value) == Some(RowsDef::Metric)
        && def.metrics.iter().any(|(l, m)| m == SKIP && same_in_map(l));
    in_metrics || def.aliases.iter().any(|(l, a)| a == SKIP && same(l))
}

/// The rows of `table` that claim `def` takes as bounds or references,
/// as the mail gives them: `Theoretical maximum: 1000 IOPS`.
pub fn reference_rows(def: &ClaimDef, table: &ClaimTable) -> Vec<String> {
    // `-` also marks rows lab measures nothing for (`bios submitted`):
    // only a row whose label names a bound is shown as one.
    const BOUND_WORDS: [&str; 9] = [
        "theoretical",
        "maximum",
        "max",
        "limit",
        "ideal",
        "line rate",
        "bound",
        "expected",
        "peak",
    ];
    let names_bound = |keys: &[String]| {
        let words: Vec<String> = keys
            .join(" ")
            .to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
        let spaced = format!(" {} ", words.join(" "));
        BOUND_WORDS
            .iter()
            .any(|w| spaced.contains(&format!(" {w} ")))
    };
    table
        .rows
        .iter()
        .filter(|r| is_reference(def, &r.keys) && names_bound(&r.keys))
        .map(|r| {
            let values: Vec<String> = r
                .values
                .iter()
                .enumerate()
                .filter_map(|(ci, v)| match v {
                    Value::Number { value, .. } => {
                        let unit = table.unit_of(r, ci).map_or("", |u| &*u.symbol);
                        Some(format!("{value} {unit}").trim_end().to_string())
                    }
                    _ => None,
                })
                .collect();
            format!("{}: {}", r.keys.join(" / "), values.join(", "))
        })
        .collect()
}

/// `a=1, b=2`.
pub fn label(axes: &[(String, String)]) -> String {
    axes.iter()
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A row's own variant (`row_variants`) wins over its column's.
fn merge(r: &Coords, c: &Coords) -> Coords {
    let mut out = r.clone();
    let row_variant = r.axes.iter().any(|(a, _)| a == "variant");
    out.axes.extend(
        c.axes
            .iter()
            .filter(|(a, _)| !(row_variant && a == "variant"))
            .cloned(),
    );
    if c.metric.is_some() {
        out.metric.clone_from(&c.metric);
    }
    out
}

/// What a row stands for, from its keys.
fn row_coords(
    def: &ClaimDef,
    table: &ClaimTable,
    keys: &[String],
    plan: &Plan,
) -> Result<Coords, String> {
    let mut out = Coords::default();
    // Rows whose keys are all empty are repeated samples of one value.
    let keys: &[String] = if keys.iter().all(|k| k.trim().is_empty()) {
        &[]
    } else {
        keys
    };
    let aliased: Vec<String> = keys
        .iter()
        .map(|k| {
            def.aliases
                .iter()
                .find(|(a, _)| a.trim().eq_ignore_ascii_case(k.trim()))
                .map_or_else(|| k.clone(), |(_, v)| v.clone())
        })
        .collect();
    let mut keys: Vec<&String> = aliased.iter().collect();
    if let Some(g) = &def.group_axis {
        if keys.is_empty() {
            return Err("the row has no group header".into());
        }
        let group = keys.remove(0).clone();
        let value = if g.value == "variant" {
            plan.cells
                .iter()
                .map(|c| &c.variant)
                .find(|v| v.eq_ignore_ascii_case(group.trim()))
                .ok_or_else(|| format!("group '{group}' is not a variant of the plan"))?
                .clone()
        } else {
            group
        };
        out.axes.push((g.value.clone(), value));
    }
    let last = || {
        keys.last()
            .map(|k| k.to_string())
            .ok_or_else(|| "the row has no key".to_string())
    };
    if let Some(a) = &def.row_axis {
        let names = if def.group_axis.is_some() {
            &table.key_columns[1.min(table.key_columns.len())..]
        } else {
            &table.key_columns[..]
        };
        let idx = def
            .row_column
            .as_ref()
            .and_then(|rc| {
                names
                    .iter()
                    .position(|k| k.trim().eq_ignore_ascii_case(rc.trim()))
            })
            .unwrap_or(0);
        let key = keys
            .get(idx)
            .ok_or_else(|| "the row has no key".to_string())?;
        out.axes.push((a.value.clone(), key.to_string()));
    } else if !def.row_axes.is_empty() {
        if keys.len() != def.row_axes.len() {
            return Err(format!(
                "the row has {} key(s) ({}), row_axes names {}",
                keys.len(),
                keys.iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(" / "),
                def.row_axes.len()
            ));
        }
        for (a, k) in def.row_axes.iter().zip(&keys) {
            out.axes.push((a.value.clone(), k.to_string()));
        }
    } else {
        match def.rows.as_ref().map(|r| r.value) {
            Some(RowsDef::Variant) => {
                let key = last()?;
                let v = plan
                    .cells
                    .iter()
                    .map(|c| &c.variant)
                    .find(|v| v.eq_ignore_ascii_case(key.trim()))
                    .ok_or_else(|| format!("row '{key}' is not a variant of the plan"))?;
                out.axes.push(("variant".into(), v.clone()));
            }
            Some(RowsDef::Metric) => {
                let key = last()?;
                // A label with its section (`read IOPS`, as fio's rows
                // `read / IOPS` and `write / IOPS` need), else the label.
                let section = keys
                    .len()
                    .checked_sub(2)
                    .map(|i| format!("{} {}", keys[i].trim(), key.trim()));
                let named = |want: &str| {
                    def.metrics
                        .iter()
                        .find(|(label, _)| label.trim().eq_ignore_ascii_case(want))
                        .map(|(_, m)| m.clone())
                };
                let m = section
                    .as_deref()
                    .and_then(named)
                    .or_else(|| named(key.trim()))
                    .ok_or_else(|| format!("row '{key}' is not in the claim's metrics map"))?;
                out.metric = Some(m);
            }
            Some(RowsDef::Run) => {}
            // A sentence's claim has one row and no key.
            None if keys.is_empty() => {}
            None if !def.row_variants.is_empty() => {}
            None => {
                return Err(format!(
                    "the row has a key ({}), and the claim does not say what its rows are",
                    keys.iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(" / ")
                ));
            }
        }
    }
    let label = aliased.join(" ");
    if let Some((_, v)) = def
        .row_variants
        .iter()
        .find(|(l, _)| l.trim().eq_ignore_ascii_case(label.trim()))
    {
        out.axes.push(("variant".into(), v.clone()));
    }
    Ok(out)
}

/// What a column stands for; None when the claim leaves it out.
fn column_coords(def: &ClaimDef, name: &str) -> Result<Option<Coords>, String> {
    let mapped = def
        .columns
        .iter()
        .find(|(c, _)| c.trim().eq_ignore_ascii_case(name.trim()))
        .map(|(_, v)| v.clone());
    match &def.column_axis {
        Some(a) => {
            let value = match mapped {
                Some(v) => v,
                None if def.columns.is_empty() => strip_axis_name(name, &a.value),
                None => return Ok(None),
            };
            Ok(Some(Coords {
                axes: vec![(a.value.clone(), value)],
                metric: None,
            }))
        }
        // Rows that are variants: every column is a value of the row's.
        None if def.columns.is_empty()
            && def.rows.as_ref().map(|r| r.value) == Some(RowsDef::Variant) =>
        {
            Ok(Some(Coords::default()))
        }
        None => Ok(mapped.map(|v| Coords {
            axes: vec![("variant".into(), v)],
            metric: None,
        })),
    }
}

/// `threads=8` or `8 threads` → `8`, for a column named by its value.
fn strip_axis_name(name: &str, axis: &str) -> String {
    let t = name.trim();
    let t = t
        .strip_prefix(axis)
        .map(|r| r.trim_start_matches(['=', ' ', ':']))
        .unwrap_or(t);
    t.strip_suffix(axis).map(str::trim).unwrap_or(t).to_string()
}

/// The claimed unit's symbol and the factor from the metric's stored
/// unit to it; an error when the kinds differ.
fn units(
    def: &ClaimDef,
    table: &ClaimTable,
    row: &crate::mail::Row,
    column: usize,
    metric: &str,
    commands: &[CommandMetricDef],
) -> Result<(String, f64), String> {
    let mu = metric_unit(metric, commands).ok_or_else(|| format!("unknown metric '{metric}'"))?;
    let declared = def.unit.as_ref().and_then(|u| parse_unit(&u.value));
    let claimed = table.unit_of(row, column).cloned().or(declared);
    match claimed {
        None => Ok((mu.symbol.to_string(), 1.0)),
        Some(cu) if cu.kind == mu.kind => Ok((cu.symbol.to_string(), mu.scale / cu.scale)),
        Some(cu) => Err(format!(
            "its unit {} ({}) cannot measure {metric}, which is in {} ({})",
            cu.symbol,
            kind_name(cu.kind),
            mu.symbol,
            kind_name(mu.kind)
        )),
    }
}

/// Whether an axis value and a table key are the same: as numbers when
/// both are (`1` and `1.0`, or `8` and `8 threads`), architectures by
/// their canonical names, other words without case.
pub fn same_value(axis: &str, key: &str) -> bool {
    let (a, k) = (axis.trim(), key.trim());
    if a.eq_ignore_ascii_case(k) {
        return true;
    }
    if let (Some(x), Some(y)) = (super::Arch::parse(a), super::Arch::parse(k)) {
        return x == y;
    }
    let num = |s: &str| s.parse::<f64>().ok();
    let lead = |s: &str| s.split_whitespace().next().and_then(num);
    match (num(a), num(k)) {
        (Some(x), Some(y)) => x == y,
        (Some(x), None) => lead(k) == Some(x),
        _ => false,
    }
}

/// The text of a condition's value.
pub fn condition_text(v: &Loc<Scalar>) -> String {
    v.value.to_string()
}

/// A claim's source, as a person reads it.
pub fn source_label(def: &ClaimDef) -> String {
    match (&def.source, &def.from_variant) {
        (Some(ClaimSourceDef::Mail { mail }), _) => mail.clone(),
        (Some(ClaimSourceDef::MessageId { message_id }), _) => format!("<{message_id}>"),
        (None, Some(v)) => format!("the patch mail of {}", v.value),
        (None, None) => "the --mail file".into(),
    }
}

#[cfg(test)]
mod tests;
