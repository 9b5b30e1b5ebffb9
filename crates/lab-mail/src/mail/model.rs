//! What a mail claims: tables of numbers, as their author wrote them.
//!
//! Every layout a mail can use (aligned columns, `label: value` lists,
//! pasted fio or perf output, the kernel test robot's comparisons, prose)
//! comes out as one shape, [`ClaimTable`], so the binding to a matrix
//! does not care how the numbers were written.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the numbers were written in the mail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// Aligned columns, pipes or bordered tables.
    Table,
    /// A run of `label: value unit` lines.
    LabelValues,
    /// fio's text output pasted into the mail.
    Fio,
    /// A `perf stat` block.
    PerfStat,
    /// The kernel test robot's (lkp-tests) comparison table.
    Lkp,
    /// A number in a sentence: `3381 -> 3151us`, `2x faster`.
    Prose,
}

pub use crate::units::{Unit, UnitKind};

/// The message a claim came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    pub message_id: Option<String>,
    pub subject: Option<String>,
    pub author: Option<String>,
    pub date: Option<String>,
    /// The message's position in its mbox, from 1; 1 for a single mail.
    pub message: usize,
}

/// One table of numbers from a mail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimTable {
    /// Shared by every table of a message: a big message has many.
    pub origin: std::sync::Arc<Origin>,
    pub kind: ClaimKind,
    /// 0 for the mail's own text, 1 for `> ` quoted text, and so on.
    pub quote_depth: usize,
    /// The line of the message body where the table starts, from 1.
    pub line: usize,
    /// At most 3 lines just above the table, never a paragraph.
    pub caption: Option<String>,
    /// The names of the columns that key each row, left to right. A group
    /// header (`8 threads:`) above a block of rows is the first key.
    pub key_columns: Vec<String>,
    /// The value columns. A spanning header is part of the name
    /// (`iodepth 8 / IOPS`).
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// The unit of every value that names none in its cell, row or column.
    pub unit: Option<Unit>,
    /// The benchmark's parameters (`runtime: 300s`, `nr_task: 1`): the
    /// conditions of the claim, not claimed results.
    pub conditions: BTreeMap<String, String>,
    /// A sentence near the table that bounds the numbers. Best effort.
    pub theoretical_max: Option<String>,
    /// Rows that did not fit, and other things a reader should know.
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub unit: Option<Unit>,
}

/// One row: its keys (aligned to `key_columns`) and its values (aligned
/// to `columns`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub keys: Vec<String>,
    /// A unit in the row label (`p99 (us)`).
    pub unit: Option<Unit>,
    pub values: Vec<Value>,
    /// The line of the message body, from 1.
    pub line: usize,
}

impl Row {
    /// A row of one number, its unit both the row's and the value's.
    pub fn number(keys: Vec<String>, value: f64, unit: Option<Unit>, line: usize) -> Row {
        Row {
            keys,
            unit: unit.clone(),
            values: vec![Value::Number {
                value,
                unit,
                spread_pct: None,
            }],
            line,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Number {
        value: f64,
        /// A unit written in the cell itself (`3151us`).
        unit: Option<Unit>,
        /// `± 3%`: the relative spread, in percent.
        spread_pct: Option<f64>,
    },
    /// `N/A`, `n/a`, `-`: the author says there is nothing to measure.
    NotApplicable,
    /// The cell is empty.
    Missing,
}

/// The unit of a row's value in `column`: its cell's, else its row's,
/// else its column's, else the table's (`table`). A table and a table
/// still being read resolve it the same way.
pub fn value_unit<'a>(
    row: &'a Row,
    column: usize,
    columns: &'a [Column],
    table: Option<&'a Unit>,
) -> Option<&'a Unit> {
    let cell = match row.values.get(column) {
        Some(Value::Number { unit: Some(u), .. }) => Some(u),
        _ => None,
    };
    cell.or(row.unit.as_ref())
        .or(columns.get(column).and_then(|c| c.unit.as_ref()))
        .or(table)
}

impl ClaimTable {
    /// The unit of a value: its cell's, else its row's, else its
    /// column's, else the table's.
    pub fn unit_of<'a>(&'a self, row: &'a Row, column: usize) -> Option<&'a Unit> {
        value_unit(row, column, &self.columns, self.unit.as_ref())
    }

    /// The index of a column by name, ignoring case and spaces at the ends.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.trim().eq_ignore_ascii_case(name.trim()))
    }
}
