//! mbox files: the patch mails lab applies and reads claims from.

/// The messages of an mbox, without their `From ` separator lines. Data
/// that does not start with `From ` is one message, so a body line that
/// starts "From " cannot split a single mail. A separator starts a
/// message only at the top or after a blank line, and mboxrd's escaped
/// body lines (`>From `, `>>From `) lose one `>`.
pub fn messages(data: &[u8]) -> Vec<Vec<u8>> {
    if !data.starts_with(b"From ") {
        return vec![data.to_vec()];
    }
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut after_blank = true;
    for line in data.split_inclusive(|&b| b == b'\n') {
        if after_blank && line.starts_with(b"From ") {
            out.push(Vec::new());
        } else if let Some(m) = out.last_mut() {
            m.extend_from_slice(unescape_from(line));
        }
        after_blank = line.trim_ascii().is_empty();
    }
    out
}

fn unescape_from(line: &[u8]) -> &[u8] {
    let quotes = line.iter().take_while(|&&b| b == b'>').count();
    if quotes > 0 && line[quotes..].starts_with(b"From ") {
        &line[1..]
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_separators_after_blank_lines_and_unescapes() {
        // A "From " line splits only after a blank line; mboxrd escapes the
        // body lines that would.
        let mbox = b"From a@b Mon\nSubject: 1\n\nbody\n>From here\n\nFrom c@d Tue\nSubject: 2\n\ntext\nFrom mid-paragraph\n";
        let m = messages(mbox);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], b"Subject: 1\n\nbody\nFrom here\n\n");
        assert!(m[1].starts_with(b"Subject: 2"));
        assert_eq!(messages(b"Subject: one\n\nFrom the body\n").len(), 1);
    }
}
