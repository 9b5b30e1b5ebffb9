//! Derived metrics: `read.bw + write.bw`, `1000 / delay * jobs`.
//!
//! A small expression language (numbers, metric and axis names, + - * /
//! and parentheses), parsed and unit-checked at plan time, evaluated per
//! repetition by the run, before any statistics. An expression that
//! names no metric depends on axis values only: it is a bound (a
//! theoretical maximum) that the report draws beside the measured values.

use serde::{Deserialize, Serialize};

/// A derived metric as the plan carries it to the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DerivedSpec {
    pub name: String,
    pub expr: String,
    /// The unit of the result; empty when dimensionless.
    pub unit: String,
    /// True when the expression names no metric: a bound.
    pub bound: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(f64),
    Name(String),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(char),
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_digit() || cs[i] == '.') {
                i += 1;
            }
            let t: String = cs[start..i].iter().collect();
            out.push(Tok::Num(
                t.parse().map_err(|_| format!("'{t}' is not a number"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || "._".contains(cs[i])) {
                i += 1;
            }
            out.push(Tok::Name(cs[start..i].iter().collect()));
        } else {
            return Err(format!(
                "unexpected '{c}' at column {} (use numbers, names, + - * / and parentheses)",
                i + 1
            ));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Parentheses and minus signs open around the current token.
    depth: usize,
}

/// Deeper nesting is an input error, not a stack overflow.
const MAX_DEPTH: usize = 64;

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        while let Some(Tok::Op(op @ ('+' | '-'))) = self.peek().cloned() {
            self.pos += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
        Ok(e)
    }
    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        while let Some(Tok::Op(op @ ('*' | '/'))) = self.peek().cloned() {
            self.pos += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }
    fn unary(&mut self) -> Result<Expr, String> {
        let t = self.peek().cloned();
        self.pos += 1;
        let opens = matches!(t, Some(Tok::Op('-' | '(')));
        if opens {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(format!(
                    "nested deeper than {MAX_DEPTH} parentheses or minus signs"
                ));
            }
        }
        let e = self.operand(t);
        if opens {
            self.depth -= 1;
        }
        e
    }
    fn operand(&mut self, t: Option<Tok>) -> Result<Expr, String> {
        match t {
            Some(Tok::Op('-')) => Ok(Expr::Neg(Box::new(self.unary()?))),
            Some(Tok::Num(n)) => Ok(Expr::Num(n)),
            Some(Tok::Name(n)) => Ok(Expr::Name(n)),
            Some(Tok::Op('(')) => {
                let e = self.sum()?;
                match self.peek() {
                    Some(Tok::Op(')')) => {
                        self.pos += 1;
                        Ok(e)
                    }
                    _ => Err("a '(' is not closed".into()),
                }
            }
            Some(Tok::Op(c)) => Err(format!("unexpected '{c}'")),
            None => Err("the expression ends too early".into()),
        }
    }
}

pub fn parse(s: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: lex(s)?,
        pos: 0,
        depth: 0,
    };
    let e = p.sum()?;
    if let Some(t) = p.peek() {
        return Err(format!("unexpected {t:?} after a complete expression"));
    }
    Ok(e)
}

impl Expr {
    /// Every name the expression uses, in order.
    pub fn names(&self) -> Vec<&str> {
        match self {
            Expr::Num(_) => vec![],
            Expr::Name(n) => vec![n.as_str()],
            Expr::Neg(e) => e.names(),
            Expr::Bin(_, a, b) => {
                let mut v = a.names();
                v.extend(b.names());
                v
            }
        }
    }

    /// The value, with names looked up; `Err` names what is missing.
    pub fn eval(&self, get: &dyn Fn(&str) -> Option<f64>) -> Result<f64, String> {
        Ok(match self {
            Expr::Num(n) => *n,
            Expr::Name(n) => get(n).ok_or_else(|| format!("no value for '{n}'"))?,
            Expr::Neg(e) => -e.eval(get)?,
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.eval(get)?, b.eval(get)?);
                match *op {
                    '+' => x + y,
                    '-' => x - y,
                    '*' => x * y,
                    _ if y == 0.0 => return Err("division by zero".into()),
                    _ => x / y,
                }
            }
        })
    }

    /// The unit of the result. A number or an axis value is
    /// dimensionless; `+` and `-` need equal units; `*` and `/` by a
    /// dimensionless value keep the other side's unit.
    pub fn unit(&self, unit_of: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
        Ok(match self {
            Expr::Num(_) => String::new(),
            Expr::Name(n) => unit_of(n).ok_or_else(|| {
                format!("'{n}' is neither a metric this matrix produces nor an axis")
            })?,
            Expr::Neg(e) => e.unit(unit_of)?,
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.unit(unit_of)?, b.unit(unit_of)?);
                let op = *op;
                match op {
                    '+' | '-' if x == y || y.is_empty() && is_literal(b) => x,
                    '+' | '-' if x.is_empty() && is_literal(a) => y,
                    '+' | '-' => {
                        let u = |s: &str| {
                            if s.is_empty() {
                                "dimensionless".to_string()
                            } else {
                                s.to_string()
                            }
                        };
                        return Err(format!(
                            "'{op}' of {} and {}: the units differ",
                            u(&x),
                            u(&y)
                        ));
                    }
                    '*' if x.is_empty() => y,
                    '*' if y.is_empty() => x,
                    '*' => format!("{x}*{y}"),
                    _ if y.is_empty() => x,
                    _ if x == y => String::new(),
                    _ if x.is_empty() => format!("1/{y}"),
                    _ => format!("{x}/{y}"),
                }
            }
        })
    }
}

fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Num(_) => true,
        Expr::Neg(e) => is_literal(e),
        Expr::Bin(_, a, b) => is_literal(a) && is_literal(b),
        Expr::Name(_) => false,
    }
}

/// The unit of a metric fio or lab produces, from its name (a job
/// prefix, `<job>.`, is allowed); None when lab does not make it.
/// fio metric names for messages that suggest the nearest one.
pub const FIO_METRIC_EXAMPLES: &[&str] = &[
    "read.iops",
    "write.iops",
    "read.bw",
    "write.bw",
    "read.lat_mean",
    "write.lat_mean",
    "read.clat_mean",
    "write.clat_mean",
    "read.clat_p99",
    "write.clat_p99",
    "read.lat_p99",
    "write.lat_p99",
    "sync.lat_p99",
    "read.ios",
    "write.ios",
    "cpu.usr",
    "cpu.sys",
    "cpu.ctx",
];

/// fio's latency percentiles (its JSON key) and the names lab stores
/// them under: `read.clat_p99`.
pub const FIO_PERCENTILES: [(&str, &str); 5] = [
    ("50.000000", "p50"),
    ("90.000000", "p90"),
    ("95.000000", "p95"),
    ("99.000000", "p99"),
    ("99.900000", "p99_9"),
];

/// Bandwidth in each unit fio prints: bytes, kB (SI) and KiB (IEC) per
/// second: the name lab stores it under, the divisor of bytes per
/// second, and the unit.
pub const FIO_BANDWIDTH: [(&str, f64, &str); 5] = [
    ("bw", 1.0, "B/s"),
    ("bw_kb", 1e3, "kB/s"),
    ("bw_kib", 1024.0, "KiB/s"),
    ("bw_mb", 1e6, "MB/s"),
    ("bw_mib", 1048576.0, "MiB/s"),
];

pub fn fio_metric_unit(name: &str) -> Option<&'static str> {
    let tail = |n: usize| -> String {
        let parts: Vec<&str> = name.split('.').collect();
        parts[parts.len().saturating_sub(n)..].join(".")
    };
    let last2 = tail(2);
    let (dir, what) = last2.split_once('.')?;
    if dir == "cpu" {
        return match what {
            "usr" | "sys" => Some("%"),
            "ctx" => Some("count"),
            _ => None,
        };
    }
    if !["read", "write", "trim", "sync"].contains(&dir) {
        return None;
    }
    let lat = ["lat", "clat"].iter().any(|k| {
        what.strip_prefix(k)
            .and_then(|r| r.strip_prefix('_'))
            .is_some_and(|r| r == "mean" || FIO_PERCENTILES.iter().any(|(_, p)| *p == r))
    });
    if lat {
        return Some("ns");
    }
    if dir == "sync" {
        return (what == "ios").then_some("count");
    }
    match what {
        "iops" => Some("IOPS"),
        "ios" => Some("count"),
        _ => FIO_BANDWIDTH
            .iter()
            .find(|(n, ..)| *n == what)
            .map(|(.., unit)| *unit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(n: &str) -> Option<String> {
        match n {
            "delay" | "jobs" => Some(String::new()),
            _ => fio_metric_unit(n).map(String::from),
        }
    }

    #[test]
    fn precedence_parentheses_and_negation() {
        let get = |n: &str| match n {
            "read.bw" => Some(3.0),
            "write.bw" => Some(4.0),
            "delay" => Some(10.0),
            "jobs" => Some(8.0),
            _ => None,
        };
        let v = |s: &str| parse(s).unwrap().eval(&get).unwrap();
        assert_eq!(v("read.bw + write.bw"), 7.0);
        assert_eq!(v("1000 / delay * jobs"), 800.0);
        assert_eq!(v("1000 / (delay * jobs)"), 12.5);
        assert_eq!(v("-read.bw + 2 * (write.bw - 1)"), 3.0);
        assert_eq!(v("0.5 * .5"), 0.25);
        assert_eq!(
            parse("1 / (delay - 10)").unwrap().eval(&get).unwrap_err(),
            "division by zero"
        );
        assert_eq!(
            parse("sync.lat_p99").unwrap().eval(&get).unwrap_err(),
            "no value for 'sync.lat_p99'"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}1{}", "(".repeat(20_000), ")".repeat(20_000));
        assert!(parse(&deep).unwrap_err().contains("nested deeper than 64"));
        let minus = format!("{}1", "-".repeat(50_000));
        assert!(parse(&minus).unwrap_err().contains("nested deeper than 64"));
        // 64 levels, and siblings at one level, are fine.
        let ok = format!("{}1{}", "(".repeat(64), ")".repeat(64));
        assert!(parse(&ok).is_ok());
        let wide = vec!["(-a)"; 1000].join(" + ");
        assert!(parse(&wide).is_ok());
    }

    #[test]
    fn syntax_errors_say_what_is_wrong() {
        assert!(parse("read.bw +").unwrap_err().contains("ends too early"));
        assert!(parse("(1 + 2").unwrap_err().contains("not closed"));
        assert!(parse("1 % 2").unwrap_err().contains("unexpected '%'"));
        assert!(parse("1 2").unwrap_err().contains("after a complete"));
    }

    #[test]
    fn units_are_checked() {
        let u = |s: &str| parse(s).unwrap().unit(&units);
        assert_eq!(u("read.bw + write.bw").unwrap(), "B/s");
        assert_eq!(u("cpu.usr + cpu.sys").unwrap(), "%");
        assert_eq!(u("1000 / delay * jobs").unwrap(), "");
        assert_eq!(u("write.lat_mean / 1000").unwrap(), "ns");
        assert_eq!(u("job1.write.bw_mib * 2").unwrap(), "MiB/s");
        assert_eq!(u("read.bw / read.iops").unwrap(), "B/s/IOPS");
        assert_eq!(u("sync.lat_p99_9 + 1").unwrap(), "ns");
        let e = u("write.lat_mean + write.bw").unwrap_err();
        assert!(e.contains("ns and B/s") && e.contains("differ"), "{e}");
        assert!(
            u("read.bw + read.bw_kib")
                .unwrap_err()
                .contains("B/s and KiB/s")
        );
        assert!(u("read.bogus * 2").unwrap_err().contains("'read.bogus'"));
    }
}
