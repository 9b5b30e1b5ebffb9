//! The shell commands a mail shows, as a person pasted them: prompts,
//! `\` continuations, `;`/`&&`/`|` chains, `for` loops and `$(...)`.
//!
//! Not a shell: enough to find what ran (fio, dmsetup, knob writes,
//! modprobe, mkfs, mount) and which words a loop varied. Every command
//! keeps the line of the mail it came from, so a comment can quote it.

/// One logical line of a mail that holds commands, continuations joined.
#[derive(Clone, Debug, PartialEq)]
pub struct Logical {
    /// The first physical line, from 1, in the text it came from.
    pub line: usize,
    /// The text with its prompt taken off.
    pub text: String,
    /// Whether it had a shell prompt (`$ `, `# `, `root@x:~# `).
    pub prompted: bool,
}

/// One simple command: its words, where `$(...)` and quoted strings are
/// one word each, quotes removed.
#[derive(Clone, Debug, PartialEq)]
pub struct Simple {
    pub words: Vec<String>,
    /// The text after `>` (a redirect target), if any.
    pub redirect: Option<String>,
}

/// A pipeline: `echo "..." | dmsetup create x` is two simples.
pub type Pipeline = Vec<Simple>;

/// A loop's variable and the words it takes, for the commands inside.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub var: String,
    pub values: Vec<String>,
}

/// A command as found: its pipeline, the loop around it, its line.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub pipeline: Pipeline,
    pub looped: Option<Loop>,
    pub line: usize,
    /// The logical line, for comments that quote the mail.
    pub text: String,
    pub prompted: bool,
}

/// Shell prompts people paste: `$ `, `# `, `root@host:~# `,
/// `[root@host ~]# `, `host$ `.
fn strip_prompt(s: &str) -> Option<&str> {
    for p in ["$ ", "# ", "% "] {
        if let Some(r) = s.strip_prefix(p) {
            return Some(r);
        }
    }
    let end = s.find(['#', '$'])?;
    let head = &s[..end];
    let looks = (head.contains('@') || head.starts_with('['))
        && !head.contains(' ')
        && s[end + 1..].starts_with(' ')
        || (head.starts_with('[') && head.ends_with(']'));
    looks.then(|| s.get(end + 1..).unwrap_or("").trim_start())
}

/// The logical lines of a text: indentation and prompts off, lines that
/// end in `\` joined with the next.
pub fn logical_lines(text: &str) -> Vec<Logical> {
    let mut out: Vec<Logical> = Vec::new();
    let mut open: Option<Logical> = None;
    // The raw line the last logical line ended on.
    let mut last_end = usize::MAX;
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        // A mail client wraps a long command without a `\`: a line of
        // options right under a line that has options goes on it.
        if open.is_none()
            && last_end.wrapping_add(1) == i
            && starts_with_option(t)
            && let Some(l) = out.last_mut()
            && l.text.split_whitespace().skip(1).any(is_option)
        {
            let (body, more) = continued(t);
            l.text.push(' ');
            l.text.push_str(body);
            last_end = i;
            if more {
                open = out.pop();
            }
            continue;
        }
        last_end = i;
        if let Some(mut l) = open.take() {
            let (body, more) = continued(t);
            l.text.push(' ');
            l.text.push_str(body);
            if more {
                open = Some(l);
            } else {
                out.push(l);
            }
            continue;
        }
        let (text, prompted) = match strip_prompt(t) {
            Some(r) => (r.trim(), true),
            None => (t, false),
        };
        let (body, more) = continued(text);
        let l = Logical {
            line: i + 1,
            text: body.to_string(),
            prompted,
        };
        if more {
            open = Some(l);
        } else {
            out.push(l);
        }
    }
    out.extend(open);
    out
}

/// `--direct=1`, `-rw=read`, `-p1`: a word that is a command's option
/// (a dash or two, then a letter); `- item` and `-20%` are not.
fn is_option(w: &str) -> bool {
    let rest = w.strip_prefix("--").or_else(|| w.strip_prefix('-'));
    rest.is_some_and(|r| r.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
}

fn starts_with_option(t: &str) -> bool {
    t.split_whitespace().next().is_some_and(is_option)
}

fn continued(t: &str) -> (&str, bool) {
    match t.strip_suffix('\\') {
        Some(b) => (b.trim_end(), true),
        None => (t, false),
    }
}

/// The longest line a command keeps as its quote, in bytes.
const MAX_QUOTE: usize = 1024;

/// The commands of a text, loops expanded into [`Loop`]s: the lines
/// of `for v in a b; do` ... `done` carry the loop, as does a one-line
/// `for v in a b; do cmd $v; done`.
pub fn commands(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut looped: Option<Loop> = None;
    // `devices="/dev/ram0 /dev/mapper/a"`, `devices+=" /dev/mapper/b"`:
    // what a later `for dev in $devices` loops over.
    let mut vars: Vec<(String, String)> = Vec::new();
    for l in logical_lines(text) {
        // A "command" longer than the claims reader's longest line is a
        // pasted blob, not something a person typed (and splitting it
        // would cost memory in proportion to its statements).
        if l.text.len() > crate::mail::claims::lines::MAX_LINE {
            continue;
        }
        for stmt in split_top(&l.text, &[";", "&&", "||"]) {
            let stmt = stmt.trim();
            if stmt.is_empty() {
                continue;
            }
            if let Some((name, append, value)) = assignment(stmt) {
                // A person's script sets a few; a pasted blob of
                // thousands must not make each lookup cost them all.
                let room = vars.len() < MAX_VARS;
                match vars.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) if append && v.len() < MAX_VAR => v.push_str(&value),
                    Some((_, v)) if !append => *v = value,
                    None if room => vars.push((name, value)),
                    _ => {}
                }
                continue;
            }
            if let Some(lp) = loop_header(stmt, &vars) {
                looped = Some(lp);
                continue;
            }
            let stmt = stmt.strip_prefix("do ").map(str::trim).unwrap_or(stmt);
            if stmt == "do" {
                continue;
            }
            if stmt == "done" || stmt.starts_with("done ") {
                looped = None;
                continue;
            }
            // `--bs=${blocksize}` after `blocksize="16k"`: the value the
            // script set, when it set one.
            let expanded = expand(stmt, &vars);
            let stmt = expanded.as_str();
            let pipeline: Pipeline = split_top(stmt, &["|"])
                .iter()
                .map(|p| simple(p))
                .filter(|s| !s.words.is_empty())
                .collect();
            if pipeline.is_empty() {
                continue;
            }
            // The line is the command's quote; a long line of many
            // statements quotes only this one, or each statement would
            // copy the whole line (quadratic memory).
            let text = if l.text.len() <= MAX_QUOTE {
                l.text.to_string()
            } else {
                crate::util::prefix(stmt, MAX_QUOTE).to_string()
            };
            out.push(Found {
                pipeline,
                looped: looped.clone(),
                line: l.line,
                text,
                prompted: l.prompted,
            });
        }
    }
    out
}

/// `stmt` with each `$name` and `${name}` of a variable set before it
/// replaced by its value; other `$` words (`$1`, `$(...)`, a loop's
/// variable) stay.
fn expand(stmt: &str, vars: &[(String, String)]) -> String {
    if vars.is_empty() || !stmt.contains('$') {
        return stmt.to_string();
    }
    let mut out = String::with_capacity(stmt.len());
    let mut rest = stmt;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = match after.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(end) => (&b[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        match vars.iter().find(|(n, _)| !name.is_empty() && n == name) {
            // A statement grows no longer than a line lab reads: `$x$x$x`
            // of a long value must not multiply it.
            Some((_, v)) if out.len() + v.len() > crate::mail::claims::lines::MAX_LINE => {
                return stmt.to_string();
            }
            Some((_, v)) if !v.contains('$') => {
                out.push_str(v);
                rest = &after[used..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The most shell variables, and the longest value, a mail's commands
/// are read with.
const MAX_VARS: usize = 64;
const MAX_VAR: usize = 4096;

/// `name=value` or `name+=value` alone on a statement: a shell
/// variable set (quotes taken off), not a command.
fn assignment(stmt: &str) -> Option<(String, bool, String)> {
    let (name, value) = stmt.split_once('=')?;
    let (name, append) = match name.strip_suffix('+') {
        Some(n) => (n, true),
        None => (name, false),
    };
    let plain = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let value = value.trim();
    let quoted = value.len() >= 2
        && (value.starts_with('"') && value.ends_with('"')
            || value.starts_with('\'') && value.ends_with('\''));
    // `a=1 fio ...` sets a variable for one command: that is the command.
    // `blocksize=${blocksize}"` is the end of a wrapped `echo "..."`.
    let open_quote = !quoted && value.contains(['"', '\'']);
    if !plain || open_quote || (!quoted && value.contains(char::is_whitespace)) {
        return None;
    }
    let value = if quoted {
        &value[1..value.len() - 1]
    } else {
        value
    };
    Some((name.to_string(), append, value.to_string()))
}

/// `for d in 1 5 10` (with or without `; do`), `for d in $(seq 1 3)`,
/// `for dev in $devices` (a variable set before).
fn loop_header(stmt: &str, vars: &[(String, String)]) -> Option<Loop> {
    let rest = stmt.strip_prefix("for ")?;
    let (var, rest) = rest.trim().split_once(' ')?;
    let list = rest.trim().strip_prefix("in ")?;
    let list = list.trim().trim_end_matches("do").trim();
    // `seq 1 3` in backquotes is `$(seq 1 3)`.
    let list = match list.strip_prefix('`').and_then(|l| l.strip_suffix('`')) {
        Some(inner) => format!("$({inner})"),
        None => list.to_string(),
    };
    let words = words(&list);
    let mut values = Vec::new();
    for w in words {
        let name = w
            .strip_prefix("${")
            .and_then(|n| n.strip_suffix('}'))
            .or_else(|| w.strip_prefix('$'));
        if let Some((_, v)) = name.and_then(|n| vars.iter().find(|(k, _)| k == n)) {
            values.extend(v.split_whitespace().map(String::from));
            continue;
        }
        match seq(&w) {
            Some(s) => values.extend(s),
            None => values.push(w),
        }
    }
    // A command's output lab cannot know (`$(seq $1 $2)`) gives no values.
    if values.iter().any(|v| v.contains("$(") || v.contains('`')) {
        return None;
    }
    (!values.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then(|| {
        Loop {
            var: var.to_string(),
            values,
        }
    })
}

/// `$(seq 1 3)` or `$(seq 0 2 8)` → the numbers, at most 64 of them.
fn seq(w: &str) -> Option<Vec<String>> {
    let inner = w.strip_prefix("$(seq ")?.strip_suffix(')')?;
    let n: Vec<i64> = inner
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let (first, step, last) = match n[..] {
        [l] => (1, 1, l),
        [f, l] => (f, 1, l),
        [f, s, l] => (f, s, l),
        _ => return None,
    };
    if step <= 0 || (last - first) / step > 64 {
        return None;
    }
    Some(
        (0..)
            .map(|k| first + k * step)
            .take_while(|v| *v <= last)
            .map(|v| v.to_string())
            .collect(),
    )
}

/// Split at any of `seps` outside quotes and `$(...)`.
fn split_top(s: &str, seps: &[&str]) -> Vec<String> {
    let mut out = vec![String::new()];
    let (mut quote, mut depth) = (None::<char>, 0usize);
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let top = quote.is_none() && depth == 0;
        if top
            && let Some(sep) = seps.iter().find(|p| s[i..].starts_with(**p))
            // `||` is not two pipes.
            && !(*sep == "|" && (s[i + 1..].starts_with('|') || s[..i].ends_with('|')))
        {
            out.push(String::new());
            for _ in 1..sep.len() {
                it.next();
            }
            continue;
        }
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if q == c => quote = None,
            (None, '(') if s[..i].ends_with('$') => depth += 1,
            (None, ')') if depth > 0 => depth -= 1,
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out
}

/// The words of one command, quotes removed, `$(...)` kept whole, and a
/// `> path` redirect taken apart.
fn simple(s: &str) -> Simple {
    let mut ws = words(s);
    let mut redirect = None;
    if let Some(i) = ws.iter().position(|w| w == ">" || w == ">>") {
        redirect = ws.get(i + 1).cloned();
        ws.truncate(i);
    } else if let Some(i) = ws
        .iter()
        .position(|w| w.starts_with('>') && w.len() > 1 && !w.starts_with(">&"))
    {
        redirect = Some(ws[i].trim_start_matches('>').to_string());
        ws.truncate(i);
    }
    // `sudo`, `time`, `taskset -c 0`, `numactl ...` only wrap the command.
    loop {
        match ws.first().map(String::as_str) {
            Some("sudo" | "time" | "exec" | "nohup") => {
                ws.remove(0);
            }
            Some("taskset") if ws.len() > 3 => {
                ws.drain(..3);
            }
            Some("numactl") => {
                let n = ws.iter().skip(1).take_while(|w| w.starts_with('-')).count();
                ws.drain(..=n);
            }
            _ => break,
        }
    }
    Simple {
        words: ws,
        redirect,
    }
}

/// Shell words: whitespace-separated, `'...'` and `"..."` quotes
/// removed, `$(...)` one word with its spaces.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let (mut quote, mut depth) = (None::<char>, 0usize);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() && depth == 0 => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
                continue;
            }
            (None, '\'' | '"') if depth == 0 => {
                quote = Some(c);
                started = true;
                continue;
            }
            (Some(q), _) if q == c && depth == 0 => {
                quote = None;
                continue;
            }
            (Some('"') | None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                started = true;
                continue;
            }
            (q, '$') if q != Some('\'') && chars.peek() == Some(&'(') => depth += 1,
            (q, ')') if q != Some('\'') && depth > 0 => depth -= 1,
            _ => {}
        }
        cur.push(c);
        started = true;
    }
    if started {
        out.push(cur);
    }
    out
}

/// A word with `$var`/`${var}` replaced.
pub fn substitute(word: &str, var: &str, with: &str) -> String {
    let w = word.replace(&format!("${{{var}}}"), with);
    let mut out = String::new();
    let pat = format!("${var}");
    let mut rest = w.as_str();
    while let Some(i) = rest.find(&pat) {
        let after = &rest[i + pat.len()..];
        out.push_str(&rest[..i]);
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&pat);
        } else {
            out.push_str(with);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_continuations_and_quotes() {
        let t = "  # fio --name=a \\\n      --rw=randread\n$ echo 0 > /sys/block/nullb0/queue/nomerges\nroot@vm:~# modprobe null_blk gb=4\n[root@host ~]# mkfs.xfs -f /dev/nvme0n1\nplain words here\n";
        let l = logical_lines(t);
        assert_eq!(l[0].text, "fio --name=a --rw=randread");
        assert!(l[0].prompted);
        assert_eq!(l[0].line, 1);
        assert_eq!(l[1].line, 3);
        assert_eq!(l[2].text, "modprobe null_blk gb=4");
        assert_eq!(l[3].text, "mkfs.xfs -f /dev/nvme0n1");
        assert!(!l[4].prompted);
        assert_eq!(
            words(
                r#"dmsetup create x --table "0 $(blockdev --getsz /dev/sdb) delay /dev/sdb 0 5""#
            ),
            vec![
                "dmsetup",
                "create",
                "x",
                "--table",
                "0 $(blockdev --getsz /dev/sdb) delay /dev/sdb 0 5"
            ]
        );
    }

    #[test]
    fn pipelines_redirects_and_loops() {
        let t = "for d in 1 5 10; do echo \"0 $(blockdev --getsz /dev/nullb0) delay /dev/nullb0 0 $d\" | dmsetup create delay$d; done\necho none >/sys/block/nvme0n1/queue/scheduler\nfor qd in $(seq 1 3)\ndo\n  fio --iodepth=$qd\ndone\nfio --name=x\n";
        let c = commands(t);
        assert_eq!(c.len(), 4, "{c:#?}");
        assert_eq!(c[0].pipeline.len(), 2);
        assert_eq!(c[0].pipeline[1].words, vec!["dmsetup", "create", "delay$d"]);
        let lp = c[0].looped.as_ref().unwrap();
        assert_eq!(
            (lp.var.as_str(), lp.values.clone()),
            ("d", vec!["1".into(), "5".into(), "10".into()])
        );
        assert_eq!(
            c[1].pipeline[0].redirect.as_deref(),
            Some("/sys/block/nvme0n1/queue/scheduler")
        );
        assert_eq!(c[2].looped.as_ref().unwrap().values, vec!["1", "2", "3"]);
        assert_eq!(c[2].line, 5);
        assert!(c[3].looped.is_none());
        assert_eq!(substitute("delay$d $dev", "d", "5"), "delay5 $dev");
    }

    #[test]
    fn loops_over_a_variable_set_before() {
        let t = "devices=\"/dev/ram0 /dev/mapper/a \"\ndevices+=\"/dev/mapper/b\"\nRUNS=3 fio --name=x\nfor dev in $devices; do\n  fio --filename=$dev | grep READ\ndone\n";
        let c = commands(t);
        // The assignments are no commands; `RUNS=3 fio` is one.
        assert_eq!(c.len(), 2, "{c:#?}");
        assert_eq!(
            c[1].looped.as_ref().unwrap().values,
            vec!["/dev/ram0", "/dev/mapper/a", "/dev/mapper/b"]
        );
    }

    /// A blob of assignments is read with a bounded table: the first
    /// variables expand, the ones past the bound stay words.
    #[test]
    fn variables_set_before_fill_commands() {
        assert_eq!(
            super::expand(
                "fio --bs=${blocksize} --numjobs=$jobs --x=$1 --y=$unset",
                &[
                    ("blocksize".into(), "16k".into()),
                    ("jobs".into(), "16".into())
                ]
            ),
            "fio --bs=16k --numjobs=16 --x=$1 --y=$unset"
        );
        // Expansions that would outgrow a line leave it as written.
        let long = "A".repeat(4000);
        let stmt = "fio $x ".repeat(10);
        assert_eq!(super::expand(&stmt, &[("x".into(), long)]), stmt);
    }

    #[test]
    fn variables_are_bounded() {
        let mut t: String = (0..100)
            .map(|i| format!("v{i}=\"/dev/ram{i}\"\n"))
            .collect();
        t.push_str(
            "for d in $v1; do fio --filename=$d; done\nfor d in $v99; do fio --filename=$d; done\n",
        );
        let c = commands(&t);
        assert_eq!(c[0].looped.as_ref().unwrap().values, vec!["/dev/ram1"]);
        assert_eq!(c[1].looped.as_ref().unwrap().values, vec!["$v99"]);
    }

    #[test]
    fn backquoted_seq_is_a_list_and_unknown_output_none() {
        let c = commands(
            "for i in `seq 1 3`; do fio --name=$i; done\nfor i in `seq $1 $2`; do fio --name=$i; done\n",
        );
        assert_eq!(c[0].looped.as_ref().unwrap().values, vec!["1", "2", "3"]);
        assert!(c[1].looped.is_none(), "{:?}", c[1].looped);
    }

    #[test]
    fn wrappers_and_or_chains() {
        let c = commands("sudo taskset -c 2 fio --name=a || true\n");
        assert_eq!(c[0].pipeline[0].words, vec!["fio", "--name=a"]);
        assert_eq!(c[1].pipeline[0].words, vec!["true"]);
    }
}
