//! The kernel and the variants a mail implies: the version it names,
//! the nearest tree lab builds, the architecture and HZ it measured on,
//! and the patches of the series by Message-ID.

use super::emit::{Proposal, VariantDraft};
use super::{Options, Read, facts, strip_prefix};
use crate::mail::message;

pub(super) fn kernel(
    p: &mut Proposal,
    subj: &facts::Facts,
    text: &facts::Facts,
    cap: &facts::Facts,
) {
    let named = subj.versions.first().or(text.versions.first());
    match named {
        Some(v) => {
            let (tree, exact) = facts::nearest_tree(v.value);
            p.source = tree.into();
            let (a, b) = v.value;
            p.source_notes.push(if exact {
                format!("The mail names {a}.{b} (\"{}\").", v.quote)
            } else {
                format!("The mail names {a}.{b} (\"{}\"); {tree} is the nearest tree lab builds, so the patch may need fuzz or may not apply.", v.quote)
            });
        }
        None => {
            p.source = crate::matrix::DEFAULT_SOURCE.into();
            let commit = text.base_commit.as_ref().map(|c| format!(" Its base-commit is {c}: a git tree at that commit would be exact (source: {{git: DIR, ref: {c}}})."));
            p.source_notes.push(format!(
                "The mail names no kernel version; lab's default tree.{}",
                commit.unwrap_or_default()
            ));
        }
    }
    // Arch and HZ: the tables' captions are the measured conditions;
    // the rest of the text may only mention a value.
    let pick = |c: &[facts::Said<String>],
                t: &[facts::Said<String>],
                what: &str,
                notes: &mut Vec<String>|
     -> Vec<String> {
        let chosen: Vec<String> = if c.is_empty() {
            t.iter().map(|s| s.value.clone()).collect()
        } else {
            c.iter().map(|s| s.value.clone()).collect()
        };
        if !c.is_empty() {
            notes.push(format!(
                "{what} {} from the table's caption (\"{}\").",
                chosen.join(", "),
                c[0].quote
            ));
        } else if let Some(s) = t.first() {
            notes.push(format!(
                "{what} {} from \"{}\".",
                chosen.join(", "),
                s.quote
            ));
        }
        for s in t.iter().filter(|s| !chosen.contains(&s.value)) {
            notes.push(format!(
                "The mail also mentions {what} {} (\"{}\"); add it to compare.",
                s.value, s.quote
            ));
        }
        chosen
    };
    let strs = |v: &[facts::Said<&'static str>]| {
        v.iter()
            .map(|s| facts::Said {
                value: s.value.to_string(),
                quote: s.quote.clone(),
            })
            .collect::<Vec<_>>()
    };
    let nums = |v: &[facts::Said<u32>]| {
        v.iter()
            .map(|s| facts::Said {
                value: s.value.to_string(),
                quote: s.quote.clone(),
            })
            .collect::<Vec<_>>()
    };
    let mut notes = Vec::new();
    p.arch = pick(&strs(&cap.arch), &strs(&text.arch), "arch", &mut notes);
    if p.arch.is_empty() {
        notes.push("The mail names no architecture: x86_64.".into());
        p.arch = vec!["x86_64".into()];
    }
    p.hz = pick(&nums(&cap.hz), &nums(&text.hz), "HZ", &mut notes)
        .iter()
        .filter_map(|h| h.parse().ok())
        .collect();
    if p.hz.is_empty() {
        notes.push("The mail names no HZ: Kconfig's default applies.".into());
    }
    p.kernel_notes = notes;
    for c in &text.config {
        p.config.push((c.clone(), "from the mail".into()));
    }
}

/// A mail without a patch that names two kernels (a regression report:
/// `Baseline: 5.14.0-427.el9`, `Test: 6.19.0-rc1-next`) compares them:
/// before is the first named, after the second, each on the tree lab
/// builds nearest to it.
fn two_kernels(p: &mut Proposal, versions: &[facts::Said<(u32, u32)>]) {
    p.variants.clear();
    for (name, v) in ["before", "after"].iter().zip(versions) {
        let (tree, exact) = facts::nearest_tree(v.value);
        let (a, b) = v.value;
        let near = if exact {
            ""
        } else {
            ", the nearest tree lab builds"
        };
        p.variants.push(VariantDraft {
            name: (*name).into(),
            description: format!("{a}.{b} (\"{}\"): {tree}{near}", v.quote),
            source: Some(tree.into()),
            ..VariantDraft::default()
        });
    }
    let said: Vec<String> = versions
        .iter()
        .map(|v| format!("{}.{}", v.value.0, v.value.1))
        .collect();
    p.variant_notes.push(format!(
        "The mail holds no patch and names two kernels, {}: the variants are those kernels, on the trees nearest them.",
        said.join(" and ")
    ));
    if p.variants[0].source == p.variants[1].source {
        p.variant_notes.push(format!(
            "Both are nearest {}, so the two variants build one tree: give one a git source at its release (source: {{git: DIR, ref: v{}}}).",
            p.variants[0].source.clone().unwrap_or_default(),
            said[1]
        ));
    }
}

pub(super) fn variants(
    p: &mut Proposal,
    msgs: &[Read],
    opts: &Options,
    versions: &[facts::Said<(u32, u32)>],
) {
    let mut patches: Vec<&Read> = msgs
        .iter()
        .filter(|m| {
            m.diff
                && !message::is_reply(&m.msg.subject)
                && message::patch_number(&m.msg.subject) != Some(0)
        })
        .collect();
    if patches
        .iter()
        .all(|m| message::patch_number(&m.msg.subject).is_some())
    {
        patches.sort_by_key(|m| message::patch_number(&m.msg.subject));
    }
    let cover = msgs.iter().find(|m| {
        message::patch_number(&m.msg.subject) == Some(0) && !message::is_reply(&m.msg.subject)
    });
    p.variants.push(VariantDraft {
        name: "before".into(),
        description: format!(
            "{} as Debian ships it",
            crate::matrix::Source::named(&p.source).map_or_else(|| p.source.clone(), |s| s.label())
        ),
        ..VariantDraft::default()
    });
    let ids: Vec<String> = patches
        .iter()
        .filter_map(|m| m.msg.message_id.clone())
        .collect();
    let mail = Some(opts.mail_ref.clone());
    // Patches without a Message-ID (a series pasted into a text file):
    // the file itself is the patch mail.
    if ids.is_empty() && !patches.is_empty() {
        let n = patches.len();
        p.variant_notes.push(format!(
            "The {n} patch(es) of {} are applied from that file.",
            opts.mail_ref
        ));
        p.variants.push(VariantDraft {
            name: "after".into(),
            description: format!("with \"{}\"", strip_prefix(&patches[0].msg.subject))
                + &if n > 1 {
                    format!(" and {} more", n - 1)
                } else {
                    String::new()
                },
            message_ids: vec![],
            mail,
            fuzz: 3,
            source: None,
        });
        return;
    }
    // A cover letter alone (`[PATCH 0/2]`): its series answers it, and b4
    // fetches the series by the cover's Message-ID.
    if ids.is_empty()
        && let Some(c) = cover
        && let Some(id) = c.msg.message_id.clone()
    {
        let n = message::series_size(&c.msg.subject)
            .map_or_else(|| "the".to_string(), |n| format!("the {n}"));
        p.variant_notes.push(format!(
            "This mail is the series' cover letter, without its patches: lab fetches {n} patches that answer <{id}> with b4, or give the thread with --mail."
        ));
        p.variants.push(VariantDraft {
            name: "after".into(),
            description: format!("with the series \"{}\"", strip_prefix(&c.msg.subject)),
            message_ids: vec![id],
            mail: None,
            fuzz: 3,
            source: None,
        });
        return;
    }
    if ids.is_empty() {
        let replied = msgs.iter().find_map(|m| m.msg.refs.first().cloned());
        match replied {
            Some(id) => {
                let quoted = msgs
                    .iter()
                    .any(|m| m.msg.parts.iter().any(|p| quotes_diff(&p.text)));
                p.variant_notes.push(if quoted {
                    format!("This mail quotes the patch it answers (its diff after '>'); lab fetches <{id}> whole with b4, or give the patch mail with --mail.")
                } else {
                    format!("This mail holds no patch; lab fetches <{id}>, the mail it answers, with b4, or give the patch mail with --mail.")
                });
                p.variants.push(VariantDraft {
                    name: "after".into(),
                    description: "with the patch this mail answers".into(),
                    message_ids: vec![id],
                    mail: None,
                    fuzz: 3,
                    source: None,
                });
            }
            None if versions.len() >= 2 => two_kernels(p, &versions[..2]),
            None => {
                p.variant_notes.push("The mail holds no patch and answers none: `after` is the same tree until patches are added.".into());
                p.variants.push(VariantDraft {
                    name: "after".into(),
                    description: "add the patches here".into(),
                    ..VariantDraft::default()
                });
            }
        }
        return;
    }
    let n = ids.len();
    if opts.per_patch && n > 1 {
        for k in 1..=n {
            let name = if k == n {
                "after".to_string()
            } else {
                format!("p{k}")
            };
            p.variants.push(VariantDraft {
                name,
                description: format!(
                    "patches 1-{k} of {n}: {}",
                    strip_prefix(&patches[k - 1].msg.subject)
                ),
                message_ids: ids[..k].to_vec(),
                mail: mail.clone(),
                fuzz: 3,
                source: None,
            });
        }
        return;
    }
    // A series by its cover letter: lab picks the patches that answer it.
    let (ids, what) = match cover.and_then(|c| c.msg.message_id.clone()) {
        Some(c) if n > 1 => (vec![c], format!("the {n} patches of the series")),
        _ if n > 1 => (ids, format!("the {n} patches of the series")),
        _ => (
            ids,
            format!("\"{}\"", strip_prefix(&patches[0].msg.subject)),
        ),
    };
    p.variants.push(VariantDraft {
        name: "after".into(),
        description: format!("with {what}"),
        message_ids: ids,
        mail,
        fuzz: 3,
        source: None,
    });
}

/// Whether a reply quotes a diff (`> diff --git`, `> --- a/` over
/// `> +++ b/`): the patch it answers, whose text b4 fetches whole.
fn quotes_diff(body: &str) -> bool {
    let unq = |l: &str| -> Option<String> {
        let t = l.trim_start();
        t.starts_with('>')
            .then(|| t.trim_start_matches(['>', ' ']).to_string())
    };
    let mut prev: Option<String> = None;
    body.lines().any(|l| {
        let u = unq(l);
        let hit = u.as_deref().is_some_and(|u| {
            u.starts_with("diff --git ")
                || (u.starts_with("+++ ") && prev.as_deref().is_some_and(|p| p.starts_with("--- ")))
        });
        prev = u;
        hit
    })
}
