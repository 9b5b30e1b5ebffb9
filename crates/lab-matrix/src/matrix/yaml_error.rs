//! serde-saphyr's errors, rewritten for a person who wrote a matrix:
//! `file:line:col: key: what is wrong`, once, in words about the matrix
//! rather than about Rust types or parser options.

use anyhow::anyhow;
use std::path::Path;

/// The error for `text` (read from `path`) failing to parse.
pub fn describe(path: &Path, text: &str, e: &serde_saphyr::Error) -> anyhow::Error {
    let raw = e.without_snippet().to_string();
    let msg = strip_location(first_line(&raw));
    let loc = e.location().filter(|l| l.line() > 0);
    let msg = friendly(&msg, text);
    match loc {
        Some(l) => {
            let (line, col) = (l.line() as usize, l.column() as usize);
            let key = key_at(text, line, col)
                .map(|k| format!("{k}: "))
                .unwrap_or_default();
            // Name the value that was found, when the message does not.
            let msg = match value_at(text, line, col) {
                Some(v) if msg.starts_with("expected ") && !msg.contains(&v) => {
                    format!("{msg}, not '{v}'")
                }
                _ => msg,
            };
            anyhow!("{}:{}:{}: {key}{msg}", path.display(), l.line(), l.column())
        }
        None => anyhow!("{}: {msg}", path.display()),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s).trim()
}

/// Drop " at line N, column M": the location is printed once, in front.
fn strip_location(s: &str) -> String {
    match regex::Regex::new(r",? at line \d+,? column \d+") {
        Ok(re) => re.replace_all(s, "").trim().to_string(),
        Err(_) => s.to_string(),
    }
}

fn friendly(msg: &str, text: &str) -> String {
    if msg.contains("DuplicateKeyPolicy") || msg.to_lowercase().contains("duplicate") {
        let key = regex::Regex::new(r"[`'\x22]([^`'\x22]+)[`'\x22]")
            .ok()
            .and_then(|re| re.captures(msg).map(|c| c[1].to_string()));
        return match key {
            Some(k) => format!("the key '{k}' appears twice in one mapping; keep one"),
            None => "a key appears twice in one mapping; keep one".into(),
        };
    }
    if msg.contains("untagged enum Scalar") {
        return "expected one value (a number, a string or true/false), not a list or a mapping"
            .into();
    }
    if msg.contains("untagged enum SourceDef") {
        return "expected debian-<version>, {tarball: PATH} or {git: PATH, ref: REF}".into();
    }
    if msg.contains("untagged enum PatchDef") {
        return "expected {mail: FILE}, {diff: FILE} or {message-id: ID}".into();
    }
    if msg.contains("untagged enum ClaimSourceDef") {
        return "expected {mail: FILE} or {message-id: ID}".into();
    }
    if msg.contains("untagged enum") {
        // Any other either-or value: no Rust type names in the message.
        return "this value has none of the forms the key takes (docs/matrix.md lists them)".into();
    }
    if msg.contains("non-finite float") {
        let v = msg.split('`').nth(1).unwrap_or("the value");
        return format!("{v} is not a finite number; write a number such as 1 or 0.5");
    }
    if msg.contains("multiple YAML documents") {
        return "a matrix is one YAML document; this `---` starts a second one: remove it and what follows, or make it a matrix file of its own".into();
    }
    if msg.contains("budget breached") {
        // The parser names its limit as a Rust value (`Nodes { .. 250001 }`):
        // only the limit's name is shown, in words.
        let what = msg
            .split(|c: char| !c.is_ascii_alphabetic())
            .rfind(|w| w.len() > 3 && w.starts_with(|c: char| c.is_ascii_uppercase()))
            .unwrap_or("size");
        return format!(
            "the file exceeds the parser's limits ({what}): a matrix is a small YAML file; \
             an axis of many values is many matrices, or a --filter"
        );
    }
    let top_level_version = text
        .lines()
        .any(|l| l.starts_with("version:") || l.starts_with("\"version\":"));
    if !top_level_version
        && (msg.contains("unknown field")
            || msg.contains("expected struct MatrixFile")
            || msg.contains("expected mapping")
            || msg.contains("missing field `version`"))
    {
        return format!(
            "this is not a lab matrix: a matrix is a YAML mapping that starts with `version: 1` ({msg})"
        );
    }
    if let Some(rest) = msg.strip_prefix("invalid ") {
        // "invalid u32" and friends: say what is expected in words.
        let what = rest.split_whitespace().next().unwrap_or("");
        let words = match what {
            "u8" | "u16" | "u32" | "u64" | "usize" => Some("a whole number, 0 or more"),
            "i32" | "i64" => Some("a whole number"),
            "f64" | "f32" => Some("a number"),
            "bool" => Some("true or false"),
            _ => None,
        };
        if let Some(w) = words {
            return format!("expected {w}");
        }
    }
    msg.to_string()
}

/// The key a location points into: `cpus` for `boot: {cpus: x}` with
/// the column on `x`, or the key itself when the column is on it.
fn key_at(text: &str, line: usize, col: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let chars: Vec<char> = l.chars().collect();
    let at = col.saturating_sub(1).min(chars.len());
    let before: String = chars[..at].iter().collect();
    let is_delim = |c: char| "{},[-".contains(c) || c.is_whitespace();
    if let Some(colon) = before.rfind(':') {
        let head = &before[..colon];
        let start = head.rfind(is_delim).map_or(0, |i| i + 1);
        let key = head[start..].trim_matches(|c| c == '"' || c == '\'');
        if !key.is_empty() {
            return Some(key.to_string());
        }
    }
    // The column is on a key: the word up to its colon.
    let after: String = chars[at..].iter().collect();
    let (key, _) = after.split_once(':')?;
    let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty() && !key.contains(char::is_whitespace)).then(|| key.to_string())
}

/// The plain value a location points at: `lots` in `noise: lots`.
fn value_at(text: &str, line: usize, col: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let rest: String = l.chars().skip(col.saturating_sub(1)).collect();
    let v: String = rest.chars().take_while(|c| !",}]#".contains(*c)).collect();
    let v = v.trim();
    let plain = !v.is_empty() && !v.contains(':') && !v.starts_with(['[', '{']);
    plain.then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_at_finds_the_key_of_a_value_or_the_key_itself() {
        let t = "boot: {cpus: x, memory: 1}\n  repetitions: lots\nname: t\n";
        assert_eq!(key_at(t, 1, 14).as_deref(), Some("cpus"));
        assert_eq!(key_at(t, 1, 25).as_deref(), Some("memory"));
        assert_eq!(key_at(t, 2, 16).as_deref(), Some("repetitions"));
        assert_eq!(key_at(t, 3, 1).as_deref(), Some("name"));
        assert_eq!(value_at(t, 2, 16).as_deref(), Some("lots"));
        assert_eq!(value_at(t, 1, 14).as_deref(), Some("x"));
    }

    #[test]
    fn messages_lose_rust_words_and_the_second_location() {
        assert_eq!(
            strip_location("invalid u32 at line 28, column 14"),
            "invalid u32"
        );
        assert_eq!(
            friendly("invalid u32", "version: 1"),
            "expected a whole number, 0 or more"
        );
        assert!(
            friendly("data did not match any variant of untagged enum Scalar", "")
                .starts_with("expected one value")
        );
        assert!(friendly("unknown field `hello`", "hello: world\n").contains("not a lab matrix"));
        // Round two of issue 27: no Rust words in any of these.
        for (raw, want) in [
            (
                "data did not match any variant of untagged enum ClaimSourceDef",
                "{mail: FILE}",
            ),
            (
                "data did not match any variant of untagged enum Other",
                "none of the forms",
            ),
            (
                "non-finite float `.nan` rejected by the configured policy",
                ".nan is not a finite",
            ),
            (
                "multiple YAML documents detected; use from_str_multiple",
                "one YAML document",
            ),
            (
                "budget breached: Nodes { limit: 250000, seen: 250001 }",
                "limits (Nodes)",
            ),
        ] {
            let got = friendly(raw, "version: 1\n");
            assert!(got.contains(want), "{raw} -> {got}");
            for rust in ["enum", "policy", "from_str", "250001"] {
                assert!(!got.contains(rust), "{raw} -> {got}");
            }
        }
        assert!(friendly("expected mapping start", "hello world\n").contains("not a lab matrix"));
        assert_eq!(value_at("delay: [1, [2]]", 1, 12), None);
    }
}
