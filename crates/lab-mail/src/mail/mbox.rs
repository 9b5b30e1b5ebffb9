//! mbox files: the patch mails lab applies and reads claims from.

use std::borrow::Cow;

/// The messages of an mbox, without their `From ` separator lines. Data
/// that does not start with `From ` is one message, so a body line that
/// starts "From " cannot split a single mail. A separator starts a
/// message only at the top or after a blank line, and mboxrd's escaped
/// body lines (`>From `, `>>From `) lose one `>`.
pub fn messages(data: &[u8]) -> Vec<Cow<'_, [u8]>> {
    if !data.starts_with(b"From ") {
        return vec![Cow::Borrowed(data)];
    }
    // A message is a slice of the data until a line needs unescaping:
    // a 50 MB thread is not copied line by line.
    let mut out: Vec<Cow<'_, [u8]>> = Vec::new();
    let mut after_blank = true;
    let mut pos = 0;
    for line in data.split_inclusive(|&b| b == b'\n') {
        pos += line.len();
        if after_blank && line.starts_with(b"From ") {
            out.push(Cow::Borrowed(&data[pos..pos]));
        } else if let Some(m) = out.last_mut() {
            let text = unescape_from(line);
            match m {
                Cow::Borrowed(b) if text.len() == line.len() => {
                    let start = b.as_ptr() as usize - data.as_ptr() as usize;
                    *b = &data[start..pos];
                }
                _ => m.to_mut().extend_from_slice(text),
            }
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
        assert_eq!(&*m[0], b"Subject: 1\n\nbody\nFrom here\n\n");
        assert!(m[1].starts_with(b"Subject: 2"));
        // Only a message with an escaped line is copied.
        assert!(matches!(m[0], Cow::Owned(_)) && matches!(m[1], Cow::Borrowed(_)));
        assert_eq!(messages(b"Subject: one\n\nFrom the body\n").len(), 1);
    }
}
