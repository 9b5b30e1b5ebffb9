//! Every layout's fixture mails, with every value, unit, key and caption.

use super::*;
use crate::mail::model::{UnitKind, Value};

fn data(path: &str) -> Vec<u8> {
    let p = format!(
        "{}/tests/data/{path}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn num(v: f64) -> Value {
    Value::Number {
        value: v,
        unit: None,
        spread_pct: None,
    }
}

#[test]
fn dm_delay_mail_has_one_aligned_table() {
    let all = extract(&data("patches/dm-delay-ns-expiry.mbox")).unwrap();
    // Besides the table, one sentence: "a task ... sees 10 ms each time"
    // (the thresholds "under 50 ms" and "under 10 ms" are not claims).
    let prose: Vec<_> = all.iter().filter(|t| t.kind == ClaimKind::Prose).collect();
    assert_eq!(prose.len(), 1, "{prose:#?}");
    assert!(
        prose[0]
            .caption
            .as_deref()
            .unwrap_or("")
            .contains("sees 10 ms each time")
    );
    let tables: Vec<_> = all.iter().filter(|t| t.kind != ClaimKind::Prose).collect();
    assert_eq!(tables.len(), 1, "{tables:#?}");
    let t = tables[0];
    assert_eq!(t.kind, ClaimKind::Table);
    assert_eq!(t.quote_depth, 0);
    assert_eq!(t.origin.message, 1);
    assert_eq!(
        t.origin.message_id.as_deref(),
        Some("20261031161158.94403-1-snitzer@kernel.org")
    );
    assert_eq!(
        t.origin.subject.as_deref(),
        Some("[PATCH] dm-delay: do not round a short delay up to the next timer tick")
    );
    assert_eq!(
        t.origin.author.as_deref(),
        Some("Mike Snitzer <snitzer@kernel.org>")
    );
    assert_eq!(
        t.origin.date.as_deref(),
        Some("Sat, 31 Oct 2026 12:11:58 -0400")
    );
    assert_eq!(
        t.caption.as_deref(),
        Some(
            "Single 4 KiB direct writes through a delay target on a memory-backed \
             null_blk device, arm64, HZ=100, mean latency in ms (300 writes each):"
        )
    );
    assert_eq!(t.key_columns, ["delay"]);
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["before", "after"]);
    assert!(t.columns.iter().all(|c| c.unit.is_none()));
    let unit = t.unit.as_ref().unwrap();
    assert_eq!(
        (&*unit.symbol, unit.kind, unit.scale),
        ("ms", UnitKind::Time, 1e6)
    );
    let rows: Vec<(Vec<String>, Vec<Value>)> = t
        .rows
        .iter()
        .map(|r| (r.keys.clone(), r.values.clone()))
        .collect();
    let expect = [
        ("1", 9.97, 1.16),
        ("2", 9.97, 2.38),
        ("5", 9.99, 5.85),
        ("20", 20.06, 21.29),
    ];
    let expect: Vec<(Vec<String>, Vec<Value>)> = expect
        .iter()
        .map(|(k, b, a)| (vec![k.to_string()], vec![num(*b), num(*a)]))
        .collect();
    assert_eq!(rows, expect);
    assert!(t.rows.iter().all(|r| r.unit.is_none()));
    assert_eq!(t.line, 18);
    assert_eq!(t.rows[0].line, 19);
    assert_eq!(
        t.theoretical_max.as_deref(),
        Some(
            "What remains above the requested delay is the kthread's polling interval, one eighth of the delay."
        )
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert!(t.conditions.is_empty());
}

/// Every field of every table, one line each, so a test that compares
/// it asserts every value, unit, key, column, kind and caption.
/// Every number of every row of `tables`, in order.
fn all_numbers(tables: &[ClaimTable]) -> Vec<f64> {
    tables
        .iter()
        .flat_map(|t| t.rows.iter().flat_map(|r| r.values.iter()))
        .filter_map(|v| match v {
            Value::Number { value, .. } => Some(*value),
            _ => None,
        })
        .collect()
}

fn dump(tables: &[ClaimTable]) -> String {
    let mut out = String::new();
    for (n, t) in tables.iter().enumerate() {
        let kind = serde_json::to_value(t.kind).unwrap();
        out += &format!(
            "#{} {} msg={} id={} depth={} line={}\n",
            n + 1,
            kind.as_str().unwrap(),
            t.origin.message,
            t.origin.message_id.as_deref().unwrap_or("-"),
            t.quote_depth,
            t.line
        );
        out += &format!("caption: {}\n", t.caption.as_deref().unwrap_or("-"));
        out += &format!("unit: {}\n", unit(t.unit.as_ref()));
        out += &format!("keys: {}\n", t.key_columns.join(" | "));
        let cols: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("{}[{}]", c.name, unit(c.unit.as_ref())))
            .collect();
        out += &format!("columns: {}\n", cols.join(" | "));
        for r in &t.rows {
            let values: Vec<String> = r.values.iter().map(value).collect();
            out += &format!(
                "row {} [{}] ({}): {}\n",
                r.line,
                r.keys.join(" / "),
                unit(r.unit.as_ref()),
                values.join(" | ")
            );
        }
        for (k, v) in &t.conditions {
            out += &format!("cond: {k}={v}\n");
        }
        for w in &t.warnings {
            out += &format!("warn: {w}\n");
        }
        if let Some(m) = &t.theoretical_max {
            out += &format!("max: {m}\n");
        }
    }
    out
}

fn unit(u: Option<&crate::mail::model::Unit>) -> String {
    u.map_or("-".into(), |u| format!("{}={}", u.written, u.symbol))
}

fn value(v: &Value) -> String {
    match v {
        Value::Number {
            value,
            unit: u,
            spread_pct,
        } => {
            let mut s = format!("{value}");
            if let Some(u) = u {
                s += &format!("{{{}={}}}", u.written, u.symbol);
            }
            if let Some(p) = spread_pct {
                s += &format!("±{p}%");
            }
            s
        }
        Value::NotApplicable => "n/a".into(),
        Value::Missing => "_".into(),
    }
}

fn mail(name: &str) -> Vec<ClaimTable> {
    extract(&data(&format!("mails/{name}"))).unwrap()
}

/// Every fixture against its expected dump (`tests/data/mails/expected/
/// NAME.dump`): every value, unit, key, column, kind, caption, condition
/// and warning. LAB_BLESS=1 writes the dumps, to be read before commit.
#[test]
fn every_fixture_gives_its_expected_claims() {
    let dir = format!(
        "{}/tests/data/mails",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "expected")
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{names:?}");
    let mut wrong = Vec::new();
    for n in &names {
        let got = dump(&mail(n));
        let path = format!("{dir}/expected/{n}.dump");
        if std::env::var_os("LAB_BLESS").is_some() {
            std::fs::write(&path, &got).unwrap();
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            wrong.push(format!("{n}:\n{got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The one claim every negative case carries, so a test shows both what
/// is read and that nothing else is.
const CONTROL: &str =
    "Latency in ms:\n\n  run   before  after\n  a     10.5    5.25\n  b     11.0    5.5\n";

fn control_only(noise: &str) {
    let text = format!("{noise}\n\n{CONTROL}\n\n{noise}\n");
    let tables = extract_text(&text);
    assert_eq!(tables.len(), 1, "{noise}:\n{}", dump(&tables));
    let t = &tables[0];
    assert_eq!(t.caption.as_deref(), Some("Latency in ms:"), "{noise}");
    assert_eq!(t.key_columns, ["run"]);
    assert_eq!(t.unit.as_ref().map(|u| &*u.symbol), Some("ms"));
    let rows: Vec<(String, Vec<Value>)> = t
        .rows
        .iter()
        .map(|r| (r.keys.join("/"), r.values.clone()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("a".to_string(), vec![num(10.5), num(5.25)]),
            ("b".to_string(), vec![num(11.0), num(5.5)])
        ],
        "{noise}"
    );
}

#[test]
fn numbers_in_diffs_are_never_claims() {
    control_only(
        "diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,2 +1,2 @@\n-\tdelay = 250 -> 500 IOPS;\n+\tdelay = 10 ms;\n \tjobs  1000  2000",
    );
    control_only("> @@ -10,3 +10,3 @@\n>  a  1  2\n> -b  3  4\n> +b  5  6\n>  c  7  8");
}

#[test]
fn trailers_and_signatures_are_never_claims() {
    control_only(
        "Tested-by: Kim Lee <kim@example.com> # 2 runs, 100 IOPS\nReviewed-by: A B <a@b.c>\nFixes: 1a2b3c4d5e6f (\"block: x\")\nCc: stable@vger.kernel.org # 6.6+",
    );
    let t = extract_text(&format!(
        "{CONTROL}\n-- \nkernel 6.12, 100 MB/s -> 200 MB/s\n  jobs  x  y\n  1     2  3\n"
    ));
    assert_eq!(t.len(), 1, "{}", dump(&t));
}

#[test]
fn dates_times_and_dmesg_are_never_claims() {
    control_only("It happened at 03:14:15 on 2026-11-30, after 12:00 of uptime.");
    control_only(
        "[   12.345678] BUG: KASAN: use-after-free in x+0x1c/0x2a0\n[   12.345702] Read of size 8 at addr ffff888104a3c010\n[  812.004211] nvme0: 42 ms -> 21 ms",
    );
    control_only("On Mon, Nov 09, 2026 at 10:00:00AM +0000, Ana Sousa wrote:");
}

#[test]
fn versions_message_ids_and_hashes_are_never_claims() {
    control_only("Seen on 6.12.117 and for-4.10, v6 of the series; from 6.1 to 6.12 it moved.");
    control_only("The report is <20261120111111.2222-1-someone@example.com>.");
    control_only("Commit 1a2b3c4d5e6f (\"block: reorder flush\") and 4864671c2222f.");
    control_only("v6: rebased on 6.13-rc1\nv5: 1.2");
}

/// A sentence that ends in a colon introduces lines of their own, not
/// more of its paragraph; `12k:` opening a line names the row as `4k:`
/// does, though 12k is no power of two.
#[test]
fn a_list_under_a_sentence_is_keyed_by_its_sizes() {
    let t = extract_text(
        "For unmodified 5.10, with all write completions deferred:\n4k:  bw=1004MiB/s\n8k:  bw=2074MiB/s\n12k: bw=2309MiB/s\n16k: bw=2465MiB/s\n",
    );
    assert_eq!(t.len(), 1, "{}", dump(&t));
    let keys: Vec<&str> = t[0].rows.iter().map(|r| r.keys[0].as_str()).collect();
    assert_eq!(keys, ["4k", "8k", "12k", "16k"], "{}", dump(&t));
    assert!(
        t[0].rows.iter().all(|r| r.values.len() == 1),
        "{}",
        dump(&t)
    );
    control_only("I tried cachestat too:\nCounting cache functions... Output every 1 seconds.");
}

/// Rows drawn between rules, labelled `w/` and `w/o` (shorthand, not
/// words of a sentence), one of them glued with a full-width comma: one
/// table of two rows under the caption above the first rule.
#[test]
fn ruled_rows_with_shorthand_labels() {
    let t = extract_text(
        "bs=4k:\n----------------------------------------\nw/ parallel dio reads | READ 30898KB/s, 7724, 555.00us   | WRITE 30875KB/s, 7718, 479.70us\n----------------------------------------\nw/o parallel dio reads| READ 117915KB/s, 29478, 248.18us | WRITE 117854KB/s\u{ff0c}29463, 21.91us\n----------------------------------------\n",
    );
    assert_eq!(t.len(), 1, "{}", dump(&t));
    assert_eq!(t[0].caption.as_deref(), Some("bs=4k:"), "{}", dump(&t));
    assert_eq!(t[0].rows.len(), 2, "{}", dump(&t));
    assert!(
        t[0].rows.iter().all(|r| r.values.len() == 6),
        "{}",
        dump(&t)
    );
    // The word that opens each pipe cell names its numbers.
    let names: Vec<&str> = t[0].columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "READ",
            "READ (2)",
            "READ (3)",
            "WRITE",
            "WRITE (2)",
            "WRITE (3)"
        ]
    );
    assert_eq!(t[0].rows[1].keys[0], "w/o parallel dio reads");
}

/// `#no.` heads a column (an abbreviation, no sentence's end); a listed
/// dd command's options (`count=10485`) are what was asked for, its
/// bracketed rate the result.
#[test]
fn abbreviated_headers_and_listed_commands() {
    let t = extract_text(
        "#no. \tOrder \t\twithout-patch(K) \twith-patch(K)\n1\tA \t\t16.90 \t\t\t17.51\n2\tB \t\t32.08 \t\t\t31.80\n",
    );
    assert_eq!(t.len(), 1, "{}", dump(&t));
    assert_eq!(t[0].columns.len(), 2, "{}", dump(&t));
    let t = extract_text(
        " - dd if=/dev/zero of=/dev/sda bs=400K  count=10485  (334 MB/s)\n - dd if=/dev/zero of=/dev/sda bs=800K  count=5242   (278 MB/s)\n",
    );
    let all = all_numbers(&t);
    assert_eq!(all, [334.0, 278.0], "{}", dump(&t));
}

/// Leading columns of a few whole numbers in every combination are the
/// settings of a designed run (keys), under a header and its `====`
/// rule; the results after them are the values.
#[test]
fn factorial_settings_are_keys() {
    let t = extract_text(
        "size    coalesce    threads    bw          cpu usage\n=========================================================\n64      0           1       23GB/sec       100%\n64      1           1       46GB/sec        79%\n64      0           4       81GB/sec       370%\n64      1           4       96GB/sec       160%\n256     0           1       44GB/sec        90%\n256     1           1       47GB/sec        48%\n256     0           4       90GB/sec       190%\n256     1           4       96GB/sec       120%\n",
    );
    assert_eq!(t.len(), 1, "{}", dump(&t));
    assert!(
        t[0].key_columns.iter().any(|k| k == "coalesce"),
        "{}",
        dump(&t)
    );
    assert!(
        t[0].rows.iter().all(|r| r.values.len() == 2),
        "{}",
        dump(&t)
    );
    assert_eq!(t[0].rows[3].keys, ["64", "1", "4"], "{}", dump(&t));
}

/// Printing a cgroup's pressure file reads a measurement, as printing a
/// counters file does; printing a setting does not.
#[test]
fn printed_readings_are_claims_and_printed_settings_are_not() {
    let t = extract_text(
        "$ cat /sys/fs/cgroup/system.slice/cpu.pressure\nsome avg10=0.00 avg60=0.00 avg300=1.89 total=333141519\nfull avg10=0.00 avg60=0.00 avg300=1.89 total=332415623\n",
    );
    assert_eq!(t.len(), 1, "{}", dump(&t));
    assert_eq!(t[0].rows.len(), 2, "{}", dump(&t));
}

/// What a file system's inspection tool prints is its state, up to the
/// paragraph's end; a run's numbers after it are read.
#[test]
fn inspection_tool_output_is_state() {
    let t = extract_text(
        "[root@m1 ~]# echo \"frag -e\" | xfs_db -r /dev/sdb1\nxfs_db> actual 494393, ideal 489246, fragmentation factor 1.04%\nHistogram of number of extents per file:\n    bucket =       count        % of total\n<=       1 =      486157        99.573 %\n<=       2 =         768        0.157 %\n\nfio then read it at 1520 MB/s.\n",
    );
    let all = all_numbers(&t);
    assert_eq!(all, [1520.0], "{}", dump(&t));
}

#[test]
fn process_listings_are_never_claims() {
    control_only(
        "root     1411791  2.8  0.0  30992 19864 pts/1    D+   01:30   0:01\nroot     1413640  0.0  0.0  13972  2496 pts/0    S+   01:31   0:00\nwww-data     812  0.3  1.2 102400  8812 ?        Ssl  Nov30  12:01",
    );
}

#[test]
fn options_and_footnotes_are_never_claims() {
    control_only("  fio --name=t --bs=4k --numjobs=32 --iodepth=64 --runtime=300 --size=10G");
    control_only("See [1] and [2].\n\n[1] https://lore.kernel.org/x/\n[2] https://example.org/7");
}

#[test]
fn a_line_of_units_under_the_names_joins_them() {
    let t = extract_text(
        "   syscall            calls  errors  total       min       avg\n                                     (msec)    (msec)    (msec)\n   --------------- --------  ------ -------- --------- ---------\n   clock_nanosleep     1000      0  1101.236     1.007     1.101\n   close                 98      0    32.979     0.001     0.337\n   write             489906      0 542216.077     0.000     1.107\n",
    );
    let names: Vec<&str> = t[0].columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "calls",
            "errors",
            "total (msec)",
            "min (msec)",
            "avg (msec)"
        ],
        "{}",
        dump(&t)
    );
    // `489906      0 542216.077`: numbers that touch still fill their
    // columns.
    assert_eq!(t[0].rows.len(), 3);
    assert_eq!(t[0].rows[2].values[2], num(542216.077));
}

#[test]
fn a_row_of_results_may_name_the_machine_a_setup_line_may_not() {
    let t = extract_text("ram read\t301\t298\t297\t297\nram write\t343\t342\t344\t351\n");
    let values: usize = t.iter().flat_map(|t| &t.rows).map(|r| r.values.len()).sum();
    assert_eq!(values, 8, "{}", dump(&t));
    control_only("test machine: 192 threads 4 sockets Xeon CPU @ 2.30GHz with 192G memory");
    control_only("RAM: 6GB 2 4 8");
}

#[test]
fn parameters_are_conditions_not_claims() {
    control_only("runtime: 300s\ndisk: 1HDD\nnr_task: 1\ntest_size: 128G");
    let t = extract_text("ramp_time: 10s\nmean latency: 5.85 ms\np99 latency: 6.40 ms\n");
    assert_eq!(
        dump(&t),
        "#1 label_values msg=1 id=- depth=0 line=1\ncaption: -\nunit: ms=ms\nkeys: label\ncolumns: value[-]\n\
         row 2 [mean latency] (-): 5.85{ms=ms}\nrow 3 [p99 latency] (-): 6.4{ms=ms}\ncond: ramp_time=10s\n"
    );
}

#[test]
fn never_claims_mail_has_none() {
    let tables = mail("never-claims.eml");
    assert!(tables.is_empty(), "{}", dump(&tables));
}

#[test]
fn yaml_reads_back_and_json_has_a_schema_version() {
    let tables = mail("units-mixed.eml");
    assert_eq!(tables.len(), 2);
    let yaml = render::render(&tables, render::Format::Yaml).unwrap();
    let back: Vec<ClaimTable> = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(back, tables);
    let json = render::render(&tables, render::Format::Json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema_version"], 1);
    let back: Vec<ClaimTable> = serde_json::from_value(v["tables"].clone()).unwrap();
    assert_eq!(back, tables);
}

/// The JSON written in parallel rounds reads back as the tables, in
/// their order, one table to a line, for many tables, one table and
/// none.
#[test]
fn parallel_json_equals_the_rendered_document() {
    let mut tables = Vec::new();
    for name in [
        "quoted-nested-thread.mbox",
        "borders-two-level.eml",
        "lkp-regression.eml",
    ] {
        tables.extend(mail(name));
    }
    let many: Vec<ClaimTable> = tables.iter().cycle().take(20_000).cloned().collect();
    for set in [&many[..], &tables[..1], &[]] {
        let mut out = Vec::new();
        render::write_json(set, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["schema_version"], 1);
        let back: Vec<ClaimTable> = serde_json::from_value(v["tables"].clone()).unwrap();
        assert!(back == set, "{} tables differ", set.len());
        let text = String::from_utf8(out).unwrap();
        let lines = text.lines().count();
        assert_eq!(lines, if set.is_empty() { 1 } else { set.len() + 2 });
    }
}

/// A paragraph with no full stop is one sentence: each of its claims
/// keeps a caption of the words around it, never the whole paragraph
/// (issue 27: memory grew with claims × paragraph).
#[test]
fn claims_of_one_huge_sentence_keep_short_captions() {
    // Lines of one statement each, as a mail wraps them (a line above
    // lines::MAX_LINE is not read at all).
    let text: String = (0..2000)
        .map(|i| {
            format!("latency goes from {i} -> 3151us; from 250 to {i} IOPS; cuts p99 by 7-8%;\n")
        })
        .collect();
    let tables = extract_text(&text);
    assert!(tables.len() >= 4000, "{}", tables.len());
    for t in &tables {
        let c = t.caption.as_deref().unwrap_or("");
        assert!(c.len() <= 600, "{} bytes", c.len());
    }
}

/// hyperfine's summary, in the shape its documentation prints: every
/// statistic is read, the run count is not, and the summary's factor
/// keeps its spread.
#[test]
fn hyperfine_output_gives_its_statistics_and_not_its_run_count() {
    let text = "Benchmark 1: make -j128 vmlinux\n  \
        Time (mean ± σ):     354.8 ms ±   6.0 ms    [User: 1.234 s, System: 0.456 s]\n  \
        Range (min … max):   345.1 ms … 365.2 ms    10 runs\n\n\
        Summary\n  make ran\n    1.05 ± 0.02 times faster than make2\n";
    let values: Vec<f64> = extract_text(text)
        .iter()
        .flat_map(|t| t.rows.iter().flat_map(|r| r.values.clone()))
        .filter_map(|v| match v {
            Value::Number { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    for want in [354.8, 6.0, 1.234, 0.456, 345.1, 365.2, 1.05, 0.02] {
        assert!(values.contains(&want), "{want} not in {values:?}");
    }
    assert!(!values.contains(&10.0), "{values:?}");
}

/// A line longer than lines::MAX_LINE (a pasted log, a blob) is not
/// read: its numbers would cost memory in proportion to their count.
#[test]
fn a_line_of_megabytes_is_not_read() {
    let long = "1 ".repeat(1 << 20);
    let text = format!("  delay before after\n  1 9.97 1.16\n  2 9.97 2.38\n\n{long}\n");
    let short = text.replace(&long, "");
    let (a, b) = (extract_text(&text), extract_text(&short));
    assert!(!b.is_empty());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// A header over a `====` rule, with a last column (`diff`) that the
/// rows leave empty: the rule is no header, and the rows line up with
/// the header by position (tabs at 8), not from the right.
#[test]
fn a_ruled_header_with_an_empty_last_column() {
    let text = "Results before the patches:\n\nDevice\t\tIOPS\tsys\tcontention\tdiff\n\
                ====================================================\n\
                null_blk\t879K\t89%\t93.6%\nnvme0n1\t\t901K\t86%\t94.5%\n\nwhich looks bad\n";
    let t = extract(text.as_bytes()).unwrap();
    let d = dump(&t);
    assert!(
        d.contains("keys: Device\ncolumns: IOPS[IOPS=IOPS] | sys[-] | contention[-]\n"),
        "{d}"
    );
    assert!(
        d.contains("[null_blk] (-): 879000 | 89{%=%} | 93.6{%=%}\n"),
        "{d}"
    );
    assert!(
        d.contains("[nvme0n1] (-): 901000 | 86{%=%} | 94.5{%=%}\n"),
        "{d}"
    );
}

/// The prompted command right above numbers is their caption, even at
/// the end of a paragraph of prose with no sentence break before it.
#[test]
fn a_command_above_the_numbers_is_their_caption() {
    let text = "We thought it would be faster, but the results\nshow that it is not:\n\
                $ sudo taskset -c 1 t/io_uring -b512 -d128 /dev/ng1n1\n\
                IOPS=891.49K, BW=435MiB/s, IOS/call=32/31\nIOPS=891.07K, BW=435MiB/s, IOS/call=31/31\n";
    let t = extract(text.as_bytes()).unwrap();
    assert_eq!(
        t[0].caption.as_deref(),
        Some("$ sudo taskset -c 1 t/io_uring -b512 -d128 /dev/ng1n1"),
        "{}",
        dump(&t)
    );
}

/// A sentence wrapped over two lines is prose from its first line on,
/// and its bare `from 1.09M to 1.13M` takes the unit the sentence names
/// (`IOPS`); a sentence naming no unit of a measurement gives none.
#[test]
fn a_wrapped_sentence_and_its_bare_from_to_pair() {
    let text = "There is about 3.6% improvement in IOPS of fio/t/io_uring on null_blk\n\
                with hw_queue_depth=256 on my test VM, from 1.09M to 1.13M.\n\n\
                The thread count went from 4 to 8 on that box.\n";
    let d = dump(&extract(text.as_bytes()).unwrap());
    assert!(
        d.contains(
            "columns: from[-] | to[-]\nrow 2 [] (-): 1090000{IOPS=IOPS} | 1130000{IOPS=IOPS}\n"
        ),
        "{d}"
    );
    assert!(!d.contains("[There is about]"), "{d}");
    assert!(!d.contains("| 8"), "{d}");
}

/// A range in a sentence gives both ends, the low end with the high
/// end's unit: `50 to 100MB/s`, `30~40%`, `7.5 to 90 times _more_`.
#[test]
fn ranges_in_sentences_give_both_ends() {
    let got = keyed_values(
        "With normal cards I get 50 to 100MB/s here.\n\n\
         CPU utilization is 30~40% on that CPU.\n\n\
         The old stack has 7.5 to 90 times _more_ write latency.\n",
    );
    let values: Vec<f64> = got.iter().map(|g| g.1).collect();
    assert_eq!(values, [50.0, 100.0, 30.0, 40.0, 7.5, 90.0], "{got:?}");
}

/// fio's group lines: when every line moved the same `io=` in times
/// that differ, the jobs were size-bound and `run=` was measured; a
/// time-based run's `run=` is its runtime.
#[test]
fn size_bound_group_lines_measure_run_and_time_based_ones_io() {
    let values = |text: &str| -> Vec<f64> { keyed_values(text).iter().map(|g| g.1).collect() };
    let size_bound = values(
        "  WRITE: bw=531MiB/s (556MB/s), io=4096MiB (4295MB), run=4888-7718msec\n\
         \x20  READ: bw=898MiB/s (942MB/s), io=4096MiB (4295MB), run=3397-4560msec\n",
    );
    assert_eq!(
        size_bound,
        [531.0, 556.0, 4888.0, 7718.0, 898.0, 942.0, 3397.0, 4560.0]
    );
    let time_based = values(
        "   READ: bw=1246MiB/s (1306MB/s), io=12.2GiB (13.1GB), run=10001-10001msec\n\
         \x20 WRITE: bw=1245MiB/s (1305MB/s), io=12.2GiB (13.1GB), run=10001-10001msec\n",
    );
    assert_eq!(
        time_based,
        [1246.0, 1306.0, 12.2, 13.1, 1245.0, 1305.0, 12.2, 13.1]
    );
}

/// A bare number every row repeats is the input the rows ran on (zstd's
/// bench: the same file size before each `->`); named values that
/// repeat (`IOS/call=32/32`) are still read.
#[test]
fn a_number_every_row_repeats_is_the_input() {
    let values = |text: &str| -> Vec<f64> { keyed_values(text).iter().map(|g| g.1).collect() };
    let got = values(
        "-1#zstd-test   :   6126812 ->   1017901 (x6.019), 1055.7 MB/s\n\
         -2#zstd-test   :   6126812 ->   1065645 (x5.749), 1143.0 MB/s\n\
         -3#zstd-test   :   6126812 ->   1128314 (x5.430), 1204.2 MB/s\n",
    );
    assert!(!got.contains(&6126812.0), "{got:?}");
    assert!(got.contains(&1065645.0) && got.contains(&1204.2), "{got:?}");
    let got = values(
        "IOPS=3514432, IOS/call=32/32\nIOPS=3513440, IOS/call=32/32\nIOPS=3507616, IOS/call=32/32\n",
    );
    assert_eq!(got.iter().filter(|v| **v == 32.0).count(), 6, "{got:?}");
}

/// dd's progress line above its records lines is no result; the
/// summary after them is.
#[test]
fn dd_progress_is_no_result() {
    let got: Vec<f64> = keyed_values(
        "4177264640 bytes (4.2 GB, 3.9 GiB) copied, 28 s, 149 MB/s\n\
         65536+0 records in\n65536+0 records out\n\
         4294967296 bytes (4.3 GB, 4.0 GiB) copied, 28.8946 s, 148 MB/s\n",
    )
    .iter()
    .map(|g| g.1)
    .collect();
    assert_eq!(got, [28.8946, 148.0]);
}

/// Older fios set a unit and commas apart (`bw=618740 B/s, iops=151 ,`):
/// still fio's output, and its `slat` line is the submission latency's
/// own row, not a row of the line above.
#[test]
fn old_fio_lines_with_spaced_units_are_fio() {
    let got = keyed_values(
        "read : io=102120KB, bw=618740 B/s, iops=151 , runt=169006msec\n\
         slat (usec): min=275 , max=87560 , avg=6571.88, stdev=2799.57\n",
    );
    assert!(
        got.contains(&(" / read / IOPS".to_string(), 151.0)),
        "{got:?}"
    );
    assert!(
        got.contains(&(" / read / BW".to_string(), 618740.0)),
        "{got:?}"
    );
    assert!(
        got.contains(&(" / read / slat avg".to_string(), 6571.88)),
        "{got:?}"
    );
}

/// A list item is a sentence of its own, and a nested item's claims
/// are captioned with the item above it.
#[test]
fn list_items_are_sentences_captioned_with_their_parent() {
    let t = extract_text(
        "I performed two tests:\n\
         * 32 concurrent processes performing random reads\n\
         ** the bandwidth is improved from 466KB/s to 477KB/s\n\
         ** the maximum latency is reduced from 7.667s to 1.728s\n",
    );
    let captions: Vec<&str> = t.iter().filter_map(|t| t.caption.as_deref()).collect();
    assert_eq!(
        captions,
        [
            "* 32 concurrent processes performing random reads / ** the bandwidth is improved from 466KB/s to 477KB/s",
            "* 32 concurrent processes performing random reads / ** the maximum latency is reduced from 7.667s to 1.728s",
        ]
    );
}

/// An arrow a reader put after an lkp row (`<-----`) marks the row; the
/// table goes on through it.
#[test]
fn an_arrow_after_an_lkp_row_is_a_mark() {
    let got = keyed_values(
        "a1b2c3d4e5f6a7b8 f6e7d8c9b0a1b2c3\n\
         ---------------- ---------------------------\n\
         \x20        %stddev     %change         %stddev\n\
         \x20            \\          |                \\\n\
         \x20    56.60 ±  5%     +10.3       66.92 ±  8%  fio.latency_10ms%\n\
         \x20    13422 ±  6%      -1.4%      13233        fio.read_bw_MBps   <-----\n\
         \x20 17723847           +13.1%   20054016        fio.read_clat_99%_us\n",
    );
    let rows: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    assert!(rows.contains(&"fio.read_bw_MBps"), "{got:?}");
    assert!(rows.contains(&"fio.read_clat_99%_us"), "{got:?}");
}

/// The values of `text`'s claims, keyed by their row keys joined.
fn keyed_values(text: &str) -> Vec<(String, f64)> {
    extract_text(text)
        .iter()
        .flat_map(|t| t.rows.iter())
        .flat_map(|r| {
            r.values.iter().filter_map(move |v| match v {
                Value::Number { value, .. } => Some((r.keys.join(" / "), *value)),
                _ => None,
            })
        })
        .collect()
}

/// fio's terse line: fields named by their place in fio's documented
/// order; the runtime, the padding percentiles, an idle direction and
/// a bandwidth block without samples are not results.
#[test]
fn fio_terse_fields_are_named_by_their_place() {
    let body = String::from_utf8(data("claims-corpus/heldout/fio-terse-blktests-zbd.eml")).unwrap();
    let line = body.lines().find(|l| l.starts_with("> 4;fio-")).unwrap();
    let got = keyed_values(line.trim_start_matches("> "));
    let has = |k: &str, v: f64| got.iter().any(|(gk, gv)| gk.ends_with(k) && *gv == v);
    assert!(has("read iops", 91152.0), "{got:?}");
    assert!(has("read clat p99", 205.0), "{got:?}");
    assert!(has("write bw agg", 65.710471), "{got:?}");
    assert!(has("IO latency <=750us", 2.02), "{got:?}");
    assert!(!got.iter().any(|(_, v)| *v == 1921.0), "runtime: {got:?}");
    assert!(
        !got.iter()
            .any(|(k, _)| k.contains("trim") || k.contains("read bw min")),
        "{got:?}"
    );
    assert_eq!(got.len(), 103, "{got:?}");
}

/// JSON as printed: every number under its path of keys, except the
/// settings objects and the bookkeeping; a job file claims nothing.
#[test]
fn json_numbers_keep_their_path_and_settings_are_not_claims() {
    let text = "[global]\nbs=4k\niodepth=32\ngroup_reporting\n\n[job]\nrw=write\n\n\
        {\n  \"fio version\" : \"fio-3.33\",\n  \"timestamp\" : 1706631404,\n  \
        \"global options\" : {\n    \"size\" : \"2147483648\",\n    \"runtime\" : 300\n  },\n  \
        \"jobs\" : [\n    {\n      \"groupid\" : 0,\n      \"write\" : {\n        \
        \"iops\" : 6351.051820,\n        \"clat_ns\" : {\n          \"mean\" : 312417107.3,\n          \
        \"N\" : 1907151,\n          \"percentile\" : {\n            \"99.000000\" : 775946240\n          \
        }\n        },\n        \"bw_samples\" : 38394\n      },\n      \"job options\" : { },\n      \
        \"ctx\" : 446567\n    }\n  ]\n}\n";
    let got = keyed_values(text);
    let want = [
        ("jobs / write / iops", 6351.05182),
        ("jobs / write / clat_ns / mean", 312417107.3),
        (
            "jobs / write / clat_ns / percentile / 99.000000",
            775946240.0,
        ),
        ("jobs / ctx", 446567.0),
    ];
    let got_pairs: Vec<(&str, f64)> = got.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(got_pairs, want);
}

/// `time`'s output prints durations in parts; each part is a value.
#[test]
fn durations_in_parts_give_each_part() {
    let got = keyed_values("With patch:\nreal    17m21.019s\nuser    61m48.388s\n");
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, [17.0, 21.019, 61.0, 48.388], "{got:?}");
}

/// What a shell session typed, the settings it printed and structures
/// it dumped are not results.
#[test]
fn shell_traces_settings_and_record_dumps_are_never_claims() {
    for noise in [
        "root@dev linux (for-next) # make -j 64 M=drivers/block\n+ echo 4096\n++ seq 0 3",
        "-rw-r--r--. 1 root root 1.1M Feb 22 06:47 null_blk.ko",
        "  # cat /sys/fs/cgroup/io.cost.qos\n  259:0 enable=1 rpct=95.00 rlat=18776 wpct=95.00",
        "        item 9 key (257 EXTENT_DATA 0) itemoff 15673 itemsize 53\n\
                 generation 435179 type 0 (inline)",
        "nullb0  251:0    0    2G  0 disk",
        "[1]: https://www.spinics.net/lists/dm-crypt/msg07516.html",
        "[pid 271829] lseek(7, 0, SEEK_SET)      = 0\nopenat(AT_FDCWD, \"/dev/sdb\", O_RDONLY) = 3",
        "kernel.sched_wakeup_granularity_ns = 4000000\nvm.dirty_ratio = 20",
        "    echo 512 > blocksize &&\n    echo 1024 > hw_queue_depth &&\n    echo 1 > power ||",
    ] {
        control_only(noise);
    }
}

/// A printed settings file ends at the next command, whatever its
/// prompt (`]#` of a cut `[root@host ~]#`); ping and ioping name each
/// of their `a/b/c` values.
#[test]
fn settings_end_at_any_prompt_and_slash_lists_name_each_value() {
    let got = keyed_values(
        "\t]# cat /sys/block/nvme0n1/queue/write_cache\n\twrite through\n\
         \t]# ioping -c10 /dev/nvme0n1\n\t...\n\
         \tmin/avg/max/mdev = 119.1 us / 754.9 us / 2.67 ms / 1.02 ms\n\n\
         rtt min/avg/max/mdev = 0.045/0.061/0.078/0.012 ms\n",
    );
    let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "min", "avg", "max", "mdev", "rtt min", "rtt avg", "rtt max", "rtt mdev"
        ],
        "{got:?}"
    );
    assert_eq!(got[2].1, 2.67);
    assert_eq!(got[7].1, 0.012);
}

/// `N name, N name` items are named by the words after each number
/// (top's own `Tasks:` line is a snapshot of states, no result); under
/// `PID USER` (one space apart) the PID is no value, and TIME+'s
/// `0:01.39` is 1.39 s.
#[test]
fn items_named_after_their_numbers_and_process_tables() {
    let got = keyed_values("Requests: 262 total,   2 failed, 260 retried\n");
    assert_eq!(
        got,
        [
            ("Requests / total".to_string(), 262.0),
            ("Requests / failed".to_string(), 2.0),
            ("Requests / retried".to_string(), 260.0)
        ]
    );
    let got = keyed_values(
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n\
         \x20  5554 root      20   0  672064  15356   1392 R  97.0   0.1   0:17.85 fio\n\
         \x20  1388 root      20   0       0      0      0 I   3.0   0.0   0:01.39 kworker/3:1\n",
    );
    let values: Vec<f64> = got.iter().map(|g| g.1).collect();
    assert!(
        !values.contains(&5554.0) && !values.contains(&1388.0),
        "{got:?}"
    );
    assert!(values.contains(&17.85) && values.contains(&1.39), "{got:?}");
}

/// sysstat's iostat sets some names apart by one space (`%rrqm r_await`);
/// every number of a row is still a value, under its own name.
#[test]
fn a_header_with_single_spaced_names_keeps_each_name() {
    let got = keyed_values(
        "Device            r/s     rMB/s   rrqm/s  %rrqm r_await rareq-sz  aqu-sz  %util\n\
         md0           52430.00   3276.87     0.00   0.00    0.62    64.00   32.60  80.10\n\
         sd*            4487.00    409.00  2054.00  31.40    0.82    93.34    3.68  71.20\n",
    );
    assert_eq!(got.len(), 16, "{got:?}");
    assert_eq!(got[0], ("md0".to_string(), 52430.0));
    let t =
        extract_text("Device  r/s  %rrqm r_await\nmd0  5.00  1.00  0.50\nsd*  4.00  2.00  0.25\n");
    let names: Vec<&str> = t[0].columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["r/s", "%rrqm", "r_await"]);
}

/// Rows whose wide numbers touch (`1683793 1212394`) under a header
/// that does the same, a sweep of sizes in powers of two with steps
/// left out, and spanning names over the last two columns only.
#[test]
fn single_spaced_rows_size_sweeps_and_partial_spans() {
    let t = extract_text(
        "                                      random  random\n\
         size  len   write rewrite    read    read   write\n\
         800     4    1314   35488  1683793 1212394   35334\n\
         800    16    5060    7059  1901792 1894929    6600\n\
         800   512   63355   70432  1406089 1487569   72718\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(t[0].key_columns, ["size", "len"]);
    let names: Vec<&str> = t[0].columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "write",
            "rewrite",
            "read",
            "random / read",
            "random / write"
        ]
    );
    assert_eq!(t[0].rows[1].keys, ["800", "16"]);
    assert_eq!(t[0].rows[1].values[3], num(1894929.0));
}

/// A pipe table whose cells carry their change in brackets.
#[test]
fn pipe_cells_with_a_change_in_brackets() {
    let t = extract_text(
        "| case             | old   | new          |\n\
         |------------------|-------|--------------|\n\
         | wait time (us)   | 11746 | 119 (-98%)   |\n\
         | io time (us)     | 3578  | 1742 (-51%)  |\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    let r = &t[0].rows[1];
    assert_eq!(r.values[..2], [num(3578.0), num(1742.0)]);
    assert!(
        matches!(&r.values[2], Value::Number { value, unit: Some(u), .. } if *value == -51.0 && u.symbol == "%"),
        "{r:?}"
    );
    assert_eq!(
        t[0].rows[1].unit.as_ref().map(|u| u.symbol.as_ref()),
        Some("us")
    );
}

/// Names given counts no one would set are results, on a line of their
/// own or above a table; a line of settings (`mode=600 sec=5`) is not.
#[test]
fn named_counts_are_results_and_settings_are_not() {
    let got: Vec<f64> = keyed_values(
        "pkts=23987040 (MB=2745098), rps=199559\n\
         CPU    %usr   %sys\n\
         \x20 0    1.53  27.78\n\
         pkts=24078368 (MB=2755550), rps=200319\n\
         CPU    %usr   %sys\n\
         \x20 0    0.69   8.26\n",
    )
    .iter()
    .map(|(_, v)| *v)
    .collect();

    for v in [
        23987040.0, 2745098.0, 199559.0, 27.78, 24078368.0, 200319.0, 8.26,
    ] {
        assert!(got.contains(&v), "{v} in {got:?}");
    }
    assert!(extract_text("Run with mode=600 sec=5 num_mb=512 here\n").is_empty());
    assert!(
        extract_text("export JOBS=12 # 6 cores, 12 threads\nCONFIG_GCC_VERSION=140301\n")
            .is_empty()
    );
}

/// Prose: `percent` as a word, a range `between A and B unit`, and a
/// unit named before its number (`IOPS of 124.7k`).
#[test]
fn prose_percent_words_between_ranges_and_units_before() {
    let got = keyed_values(
        "The new driver is between 6.8 and -11.8 percent off, and 0.28 percent better on average.\n\n\
         The old one had a bandwidth of 487MiB/s and IOPS of 124.7k in that run.\n",
    );
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    for v in [6.8, -11.8, 0.28, 487.0] {
        assert!(values.contains(&v), "{v} in {got:?}");
    }
    assert!(
        values.iter().any(|v| *v == 124.7 || *v == 124700.0),
        "{got:?}"
    );
}

/// A dot leader ends a label, and the numbers before it name the row;
/// an ellipsis (`...`) between two results is no leader.
#[test]
fn dot_leaders_end_labels_and_ellipses_do_not() {
    let got = keyed_values(
        "Default knob 1000 . 7579.49\nknob 0 ............ 7937.84\nknob 4 ............ 7638.69\n",
    );
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, [7579.49, 7937.84, 7638.69], "{got:?}");
    let got =
        keyed_values("    runtime  94.285s  ...  107.074s\n    runtime  1.836s  ...  1.852s\n");
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, [94.285, 107.074, 1.836, 1.852], "{got:?}");
}

/// `low - high: count ###`: a histogram whose bars have no pipes; the
/// statistics line right above it is still read.
#[test]
fn dash_ranged_buckets_with_bare_bars() {
    let got = keyed_values(
        "  Percentiles:  90th: 40486.000; 99th: 51088.000\n\
         \x20 5440.000 - 6805.809:     1 ###\n\
         \x20 6805.809 - 10652.034:     3 ########\n\
         \x20 10652.034 - 13326.178:    12 ##########################\n",
    );
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, [40486.0, 51088.0, 1.0, 3.0, 12.0], "{got:?}");
}

/// A kernel log line is read only where the kernel printed a
/// throughput it measured, and without its time stamp; lines that
/// describe the machine are no results; a cell in a unit of
/// measurement is never a column's name.
#[test]
fn kernel_throughputs_machine_lines_and_measured_cells() {
    let got = keyed_values(
        "[    0.630603] xor: avx2x4   gen() 18429 MB/s\n\
         [    0.651607] xor: avx2x4   xor()  6644 MB/s\n\
         [    0.877566] nvme nvme0: 8/0/0 default/read/poll queues\n",
    );
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, [18429.0, 6644.0], "{got:?}");
    let got = keyed_values(
        "CPU(s):              128\nThread(s) per core:  2\nCPU family:          23\n\
         CPU max MHz:         2200.0000\nBogoMIPS:            4399.53\n",
    );
    assert!(got.is_empty(), "{got:?}");
    let got = keyed_values("algo a   gen() 10945 MB/s\nalgo a   xor() 8097 MB/s\n");
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, [10945.0, 8097.0], "{got:?}");
}

/// Sizes of things (`975872 blocks`, `512k chunk`), which one of a kind
/// (`super 1.2`, `algorithm 2`), fio options named after their value,
/// a command's quoted arguments and a test run's status are no results.
#[test]
fn sizes_kinds_options_quoted_arguments_and_statuses_are_no_results() {
    for text in [
        "      975872 blocks super 1.2 level 6, 512k chunk, algorithm 2 [6/6]\n",
        "\"qemu-system-x86_64\" \"-m\" \"16G\" \"-smp\" \"6\"\n",
        "Run time: 120s\nNumber of threads: 128\nfailed: 0\nskipped: 0\n",
    ] {
        assert!(
            keyed_values(text).is_empty(),
            "{text}: {:?}",
            keyed_values(text)
        );
    }
    let got = keyed_values("1 iodepth, 32 numjobs, randwrite: 1,400K IOPS vs 210K IOPS\n");
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert!(!values.contains(&1.0) && !values.contains(&32.0), "{got:?}");
}

/// A sweep repeated under each group of rows keys them; two rows of
/// sizes from 4 up in powers of two do too.
#[test]
fn sweeps_repeated_per_group_are_keys() {
    let got = keyed_values(
        "before:\n        KB  reclen   write rewrite\n      1024       4  493670  525964\n      1024       8  540467  532880\n\n\
         after:\n      1024       4  421785  456184\n      1024       8  459283  456354\n",
    );
    let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert!(
        keys.iter()
            .all(|k| k.ends_with(" / 4") || k.ends_with(" / 8")),
        "{keys:?}"
    );
    assert_eq!(values.len(), 8, "{values:?}");
}

/// /proc/diskstats rows are keyed by their numbers and device name;
/// a /proc/mounts line is no row of any table.
#[test]
fn diskstats_rows_are_keyed_and_mounts_lines_are_no_rows() {
    let got = keyed_values(
        " 253      0 vda 760 0 38498 731 28165\n 253      1 vda1 350 0 19074 293 26169\n",
    );
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    assert_eq!(
        values,
        [
            760.0, 0.0, 38498.0, 731.0, 28165.0, 350.0, 0.0, 19074.0, 293.0, 26169.0
        ],
        "{got:?}"
    );
    let got = keyed_values(
        "dev     size  used\nsda1     100    20\n/dev/sdb1 /mnt xfs rw,relatime,noquota 0 0\nsdc1     300    40\n",
    );
    assert!(got.iter().all(|(_, v)| ![0.0].contains(v)), "{got:?}");
}

/// A sum worked out in a sentence is no measurement.
#[test]
fn sums_worked_out_in_prose_are_no_results() {
    assert!(
        keyed_values("So the time cost should be 0.4 * 512 = 204.8 ms in one second.\n").is_empty()
    );
    let got = keyed_values("The time cost went from 0.4 ms to 204.8 ms in one second.\n");
    assert_eq!(got.len(), 2, "{got:?}");
}

/// fio's output wrapped by a mail client: word tails and percentile
/// tails at the left margin are read on; fio's named minimum is a value.
#[test]
fn fio_output_wrapped_by_a_mailer_is_read_on() {
    let got = keyed_values(
        "  write: IOPS=133k, BW=520MiB/s (545MB/s)(5120MiB/9848msec); 0 zone\n\
         resets\n\
         \x20   slat (usec): min=3, max=2786, avg= 5.84, stdev=36.41\n\
         \x20   clat percentiles (nsec):\n\
         \x20    |  1.00th=[  884],  5.00th=[  900], 10.00th=[  908], 15.00th=[  910],\n\
         20.00th=[916],\n\
         \x20    | 30.00th=[  924], 40.00th=[  924], 50.00th=[  932],\n",
    );
    let has = |k: &str, v: f64| got.iter().any(|(gk, gv)| gk.ends_with(k) && *gv == v);
    assert!(has("slat min", 3.0), "{got:?}");
    assert!(has("clat p1.00", 884.0), "{got:?}");
    assert!(has("clat p20.00", 916.0), "{got:?}");
    assert!(has("clat p50.00", 932.0), "{got:?}");
}

/// A ratio written `x1.580` is a value; `x4` and `x86` are words.
#[test]
fn ratios_written_x_before_the_number() {
    let got = keyed_values(
        "-1#test   :   6126812 ->   1017901 (x6.019), 1556.0 MB/s\n\
         -2#test   :   6126812 ->   1065645 (x5.749), 1563.3 MB/s\n\
         -3#test   :   6126812 ->   1128284 (x5.430), 1601.1 MB/s\n",
    );
    let values: Vec<f64> = got.iter().map(|(_, v)| *v).collect();
    for v in [6.019, 5.749, 5.43] {
        assert!(values.contains(&v), "{v} in {got:?}");
    }
    assert!(keyed_values("A PCIe x4 link on x86 boxes.\n").is_empty());
}

/// A bucket's bounds are its key: a block event's own record (device,
/// flags, `sector + count`) and a histogram's ranges give no values.
#[test]
fn histogram_bounds_and_block_event_records_are_no_values() {
    let got = keyed_values(
        "before:\n\tblock_bio_queue: 179,0 R 84601376 + 2064 [Thread-2]\n\
         \tblock_bio_queue: 179,0 R 84603440 + 2048 [Thread-2]\n\n\
         @latency[64]:\n[256, 512)        379481 |@@          |\n\
         [512, 1K)        8096428 |@@@@@@@@@@@@|\n",
    );
    assert_eq!(
        got,
        [
            ("[256, 512)".to_string(), 379481.0),
            ("[512, 1K)".to_string(), 8096428.0)
        ]
    );
}

/// The steps of a procedure say what was set up; a commit subject is
/// imperative too, and the numbers after it are still read.
#[test]
fn numbers_in_the_steps_of_a_procedure_are_settings() {
    let got = keyed_values(
        "It was verified as follows:\n- Create a first queue with completion time 1 ms.\n\
         - Set the second queue's completion time to 100 ms.\n",
    );
    assert!(got.is_empty(), "{got:?}");
    let got =
        keyed_values("Since commit abc (\"wq: Make unbound pools per-cpu\") p99 went up by 35%.\n");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].1, 35.0);
}

/// A script between markdown fences gives no values; fenced output does.
#[test]
fn a_fenced_script_is_code_and_fenced_output_is_read() {
    let script = "```\ndo_create() {\n  for i in $(seq 1 $1); do mkdir d$i; done\n}\n\
                  case \"$1\" in\n  test)\n    do_create 4000\n    do_touch 0 3000\n    ;;\nesac\n```\n";
    let got = keyed_values(script);
    assert!(got.is_empty(), "{got:?}");
    let output = "```\n  run   before  after\n  a     10.5    5.25\n  b     11.0    5.5\n```\n";
    assert_eq!(keyed_values(output).len(), 4);
}

/// A command as typed, without a prompt, gives its arguments, not
/// values; a sentence that names an option is still read.
#[test]
fn a_typed_command_gives_no_values() {
    for cmd in [
        "valkey-server --maxmemory 2560M",
        "usemem --init-time -O -y -x -n 48 1G",
        "    --norandommap --runtime=60 --rw=randread --numjobs=64 \\",
    ] {
        control_only(cmd);
    }
    let got = keyed_values("I think -pipe is, on average, about 0.2 seconds faster.\n");
    assert_eq!(got.len(), 1, "{got:?}");
}

/// fio 2.x's output, its job header cut: the `write: io=, bw=, iops=,
/// runt=` line and its percentile rows are fio's, the runtime a setting.
#[test]
fn fio_2_output_without_its_job_header_is_read_as_fio() {
    let got = keyed_values(
        "write: io=445360KB, bw=7418.6KB/s, *iops=463*, runt= 60033msec\n\
         clat (usec): min=4, max=32132, avg=311.90, stdev=1812.74\n\
         clat percentiles (usec):\n\
         | 1.00th=[ 8], 5.00th=[ 10], 10.00th=[ 16], 20.00th=[ 25],\n\
         | 99.00th=[11840], 99.50th=[15936], 99.90th=[21888], 99.95th=[23936],\n",
    );
    let find = |k: &str| {
        got.iter()
            .find(|(key, _)| key.ends_with(k))
            .map(|(_, v)| *v)
    };
    assert_eq!(find("write / IOPS"), Some(463.0), "{got:?}");
    assert_eq!(find("clat p1.00"), Some(8.0), "{got:?}");
    assert_eq!(find("clat p99.95"), Some(23936.0), "{got:?}");
    assert!(got.iter().all(|(_, v)| *v != 60033.0), "{got:?}");
}

/// A listing of space (sizes, shares, a ratio) claims nothing; the same
/// lines beside a rate, and a trace's accounting of requests and sizes,
/// are measurements.
#[test]
fn a_listing_of_sizes_is_state_not_a_claim() {
    let listing = "Overall:\n    Volume size:        931.51GiB\n    Allocated:          120.02GiB\n    Free:               811.49GiB\n    Copies:                  2.00\n\nData: Size:118.00GiB, Used:97.13GiB (82.31%)\n";
    assert_eq!(keyed_values(listing), vec![]);
    let run = "Summary:\n    Written:        120.02GiB\n    Read:            97.13GiB\n    Throughput:     412.50MiB/s\n";
    assert_eq!(keyed_values(run).len(), 3, "{:?}", keyed_values(run));
    let trace = " Reads Queued:      12,       48KiB\n Writes Queued:     30,      120KiB\n";
    assert_eq!(keyed_values(trace).len(), 4, "{:?}", keyed_values(trace));
}

/// An oops wrapped by a mail client: the pieces between two time-stamped
/// lines are the record's, not a table's.
#[test]
fn a_wrapped_kernel_log_record_is_no_claim() {
    let oops = "[  812.402113] MSR:  8000000000029033 <SF,EE,ME,IR,DR,RI,LE>\nCR: 28004842  XER: 20000000\n[  812.402160] CFAR: c0000000001f0c9c IRQMASK: 0\n";
    assert_eq!(keyed_values(oops), vec![]);
}

/// fio's JSON repeats the latency target it was given; its latency
/// buckets are results.
#[test]
fn fio_json_latency_target_is_a_setting() {
    let json = "{\n  \"jobs\" : [\n    {\n      \"latency_us\" : {\n        \"2\" : 0.010000,\n        \"4\" : 12.500000\n      },\n      \"latency_depth\" : 64,\n      \"latency_target\" : 0,\n      \"latency_percentile\" : 100.000000,\n      \"latency_window\" : 0\n    }\n  ]\n}\n";
    let got = keyed_values(json);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|(k, _)| k.contains("latency_us")), "{got:?}");
}

/// `Label: N` under a label that names what was run (threads, users,
/// a sample count) is a parameter, also where two such lines under a
/// title read as a grid; the result under it is a claim.
#[test]
fn a_label_that_names_a_parameter_is_no_claim() {
    let lines = "Apache Siege 2.4.29\nConcurrent Users: 50\n";
    assert_eq!(keyed_values(lines), vec![]);
    let sysbench = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\nNumber of threads: 64\n";
    assert_eq!(keyed_values(sysbench), vec![]);
    let hist = "@usecs:\n  Count: 76\n  Average: 412\n";
    let got = keyed_values(hist);
    assert!(got.iter().all(|(_, v)| *v != 76.0), "{got:?}");
}

/// One line of a sentence: a value set is not a value measured.
#[test]
fn a_value_set_in_prose_is_no_claim() {
    let s = "With the slice set to 15ms the runs took 812ms on average.\n";
    let got = keyed_values(s);
    assert_eq!(
        got.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
        vec![812.0],
        "{got:?}"
    );
    // Alone on its line, under a command, the sentence reads as a row.
    let row = "$ ./bench -t overwrite\n\n(With the slice set to 15ms)\n";
    assert_eq!(keyed_values(row), vec![]);
}

/// Between an article and a noun a number says what a thing is (a
/// disk's link speed, a run's length); before a word of change it is
/// the change measured.
#[test]
fn a_number_that_describes_a_thing_is_no_claim() {
    let spec = "The box has a 12Gb/s SAS disk and each data point is from a 1min run.\n";
    assert_eq!(keyed_values(spec), vec![]);
    let change = "We see a 50% throughput increase and a 7% regression.\n";
    let got: Vec<f64> = keyed_values(change).iter().map(|(_, v)| *v).collect();
    assert_eq!(got, vec![50.0, 7.0]);
}

/// One `label: value` line with no unit claims its value when the label
/// says what was measured (hackbench's `Time:`), not otherwise.
#[test]
fn one_label_line_that_names_a_measure_is_a_claim() {
    let run =
        "# hackbench process 10 1000 -s 100\nRunning in process mode with 10 groups\nTime: 4.401\n";
    assert_eq!(keyed_values(run), vec![("Time".to_string(), 4.401)]);
    let other = "Release: 4\n";
    assert_eq!(keyed_values(other), vec![]);
}

/// A listing in `df -h` form (a bare `G`/`T`) is state too, also when
/// the timed command's own report follows it on the next line; that
/// report is read.
#[test]
fn a_human_readable_listing_beside_a_timed_report() {
    let text = "$ time du-like /mnt\nType       Perc     Disk Usage   Referenced\nTOTAL       95%      827G         1.3T\nzstd        29%       15G         192G\n3.72user 72.98system 1:50.07elapsed 69%CPU (0avgtext+0avgdata 80132maxresident)k\n";
    let got = keyed_values(text);
    let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "user",
            "system",
            "elapsed",
            "elapsed (1)",
            "CPU",
            "avgtext",
            "avgdata",
            "maxresident"
        ],
        "{got:?}"
    );
}

/// A hedge before a listed value (`about 180MB/s`) keeps it a value.
#[test]
fn a_hedged_label_value_is_read() {
    let text = "without patch:\nbw=1845KiB/s\nsync speed: about 180MB/s\n";
    let got = keyed_values(text);
    assert!(got.contains(&("sync speed".to_string(), 180.0)), "{got:?}");
}

fn values_of(text: &str) -> Vec<f64> {
    keyed_values(text).iter().map(|g| g.1).collect()
}

/// A progress meter (a count rising toward a fixed total, line after
/// line of one shape) is how far a run had got; the result after it
/// stays. Two lines of one shape are no meter.
#[test]
fn progress_meters_are_no_results() {
    let got = values_of(
        "[FSCK] Check node 1 / 4000 (0.00%)\n\
         [FSCK] Check node 400 / 4000 (10.00%)\n\
         [FSCK] Check node 800 / 4000 (20.00%)\n\
         [FSCK] Check node 1200 / 4000 (30.00%)\n\
         \n\
         fsck total time: 4.2 s\n",
    );
    assert_eq!(got, [4.2], "{got:?}");
    let got = values_of("hits 512 / 1024 (50.0%)\nhits 600 / 1024 (58.6%)\n");
    assert!(got.contains(&50.0) && got.contains(&58.6), "{got:?}");
}

/// A program's log message led by its severity reports what it found,
/// as a kernel log record does.
#[test]
fn program_log_messages_are_no_results() {
    let got = values_of(
        "Info: Segments per section = 1\n\
         Info: total FS sectors = 124528600 (60804 MB)\n\
         [ERROR] retry 3 of 5\n\
         \n\
         elapsed: 12.5 s\n",
    );
    assert_eq!(got, [12.5], "{got:?}");
}

/// What something should, will or may give is an expectation; a
/// measured value in the same sentence before the modal still counts.
#[test]
fn expected_numbers_in_prose_are_no_results() {
    let got = values_of("Then %util should be 20%, and latency will be 1.4ms.\n");
    assert!(got.is_empty(), "{got:?}");
    let got = values_of("The result of 58.12% is close to what the disk would show.\n");
    assert_eq!(got, [58.12], "{got:?}");
}

/// The C preprocessor, a release candidate's version and Go's b.N
/// iteration count are no results; Go's per-op figures are.
#[test]
fn defines_release_candidates_and_go_iterations_are_no_results() {
    assert!(values_of("#define MAX_COUNT 100000000\n#define ENTRY_SIZE 128\n").is_empty());
    let got = values_of("Kernels I have tried = 5.2 rc7, 4.18 rc1\n");
    assert!(!got.contains(&5.2) && !got.contains(&4.18), "{got:?}");
    let got = values_of(
        "BenchmarkReadAt/uring_512-8    8000000   8432 ns/op   60.72 MB/s\n\
         BenchmarkReadAt/uring_8192-8   1000000  42603 ns/op  192.29 MB/s\n",
    );
    assert!(
        !got.contains(&8000000.0) && !got.contains(&1000000.0),
        "{got:?}"
    );
    assert!(got.contains(&8432.0) && got.contains(&192.29), "{got:?}");
}

/// Attributes printed with their paths are settings, but a counter or a
/// reading is not; so are a cgroup file's setting, a bfq weight and
/// git's `create mode` lines.
#[test]
fn printed_attributes_cgroup_settings_and_modes_are_no_results() {
    let got = values_of(
        "/sys/block/md0/queue/nr_requests : 128\n\
         /sys/block/md0/queue/max_sectors_kb : 1280\n\
         /sys/block/md0/md/stripe_cache_size : 32768\n",
    );
    assert!(got.is_empty(), "{got:?}");
    assert!(values_of("cpu.cfs_quota_us = 400000\ncpu.cfs_period_us = 100000\n").is_empty());
    assert!(values_of("test1 cgroup bfq weight = 800\ntest2 cgroup bfq weight = 100\n").is_empty());
    assert!(
        values_of(" create mode 100644 fs/ext4/bytelog.c\n create mode 100644 fs/ext4/bytelog.h\n")
            .is_empty()
    );
}

/// A share of a run done (`49% complete`, mdstat's `49.5% (a/b)`) and
/// the span a count was taken over are no results; the rate beside them
/// is.
#[test]
fn shares_done_and_counting_spans_are_no_results() {
    let got = values_of(
        "      [=========>...........]  resync = 49.5% (6773640400/13671724544) finish=3026.3min speed=37987K/sec\n",
    );
    assert!(!got.contains(&49.5) && got.contains(&37987.0), "{got:?}");
    let got = values_of("Total QPS = 626566.2 (37594133 / 60.0s)\n");
    assert!(got.contains(&626566.2) && !got.contains(&60.0), "{got:?}");
    let got = values_of("          Resync Status : 49% complete\n");
    assert!(got.is_empty(), "{got:?}");
}

/// Rows that end in a device's path list devices (major, minor, sectors,
/// sizes); a sentence about a device still claims.
#[test]
fn device_listings_are_no_results() {
    let got = values_of(
        "RO    RA   SSZ   BSZ   StartSec            Size   Device\n\
         rw  8192   512  4096          0    480103981056   /dev/sda\n\
         rw  8192   512  4096       2048       535822336   /dev/sda1\n\
         rw  8192   512  4096    1048576       536870912   /dev/sda2\n",
    );
    assert!(got.is_empty(), "{got:?}");
    let got = values_of("fio reaches 512K IOPS at 85.5 us on /dev/nvme0n1\n");
    assert!(got.contains(&85.5), "{got:?}");
}

/// After a named result, the sizes and times with no name that trail it
/// are the run's conditions; a device's geometry (counts of sectors,
/// zones, an offset, the size restated in brackets) is no result.
#[test]
fn trailing_conditions_and_geometry_are_no_results() {
    let got = values_of(
        "bw=3338MiB/s (3500MB/s) 128k, 10sec\n\
         bw=868MiB/s (911MB/s)   144k, 10sec\n\
         bw=2982MiB/s (3127MB/s) 128k, 5min,  pvsync2\n",
    );
    assert_eq!(
        got,
        [3338.0, 3500.0, 868.0, 911.0, 2982.0, 3127.0],
        "{got:?}"
    );
    let got =
        values_of("/dev/sdx: 50782535680 512-byte sectors (24215 GiB)\n  96860 zones, offset 0\n");
    assert!(got.is_empty(), "{got:?}");
}

/// A rate something is throttled at, a timeout and top's count of
/// tasks by state are no results.
#[test]
fn throttles_timeouts_and_task_states_are_no_results() {
    assert!(values_of("I do a swraid resync which is throttled at 5MB/s.\n").is_empty());
    assert!(
        values_of("Tasks: 262 total,   2 running, 260 sleeping,   0 stopped,   0 zombie\n")
            .is_empty()
    );
    let got = values_of("%Cpu3  : 66.2 us, 27.8 sy,  0.0 ni,  0.0 id,  0.0 wa,  6.0 si\n");
    assert_eq!(got.len(), 6, "{got:?}");
}

/// A size in brackets after a name is how big the thing is; a device's
/// `(major,minor)` is no decimal; processors are counted, not measured;
/// an identifier named with its colon is no result.
#[test]
fn sizes_of_named_things_device_pairs_and_ids_are_no_results() {
    assert!(
        values_of("SSD: INTEL SSDPEKKF360G7H (360 GB)\nTestdata: enwik9 (1000000000 bytes)\n")
            .is_empty()
    );
    let got = values_of("5 seconds (3284140032 bytes) in total, 626.4 MB/s\n");
    assert!(got.contains(&626.4), "{got:?}");
    let got = values_of(">> Events (259,0): 30 entries\n");
    assert!(!got.contains(&259.0), "{got:?}");
    assert!(values_of("My host has 52 processor(s).\n").is_empty());
    let got = values_of("> Virtual Drive: 3 (Target Id: 7)\n");
    assert!(!got.contains(&7.0), "{got:?}");
}

/// A link's rating and a bus's generation, xfs_io's restated amount and
/// count, a command's continued options and a test's number and key
/// size are no results; the rates and times beside them are.
#[test]
fn link_ratings_restated_amounts_and_continued_options_are_no_results() {
    let got = values_of("This is a 12Gb/s SAS SSD disk on a PCIe 3.0 x8 slot at 8GT/s.\n");
    assert!(got.is_empty(), "{got:?}");
    let got = values_of(
        "wrote 4096/4096 bytes at offset 32768\n\
         4 KiB, 1 ops; 0.0000 sec (229.779 MiB/sec and 58823.5294 ops/sec)\n\
         read 32/32 bytes at offset 3072\n\
         32.000000 bytes, 1 ops; 0.0000 sec (568.182 KiB/sec and 18181.8182 ops/sec)\n",
    );
    assert!(!got.contains(&1.0) && !got.contains(&4.0), "{got:?}");
    assert!(
        got.contains(&229.779) && got.contains(&18181.8182),
        "{got:?}"
    );
    let got = values_of(
        "$ sudo xfs_io -tfc \"falloc 0 1k\" \\\n  -c fsync -c \"pread -v 3k 32\" /mnt/scratch/foo\n",
    );
    assert!(got.is_empty(), "{got:?}");
    let got = values_of(
        "trcypt: test 9 (256 bit key, 65536 byte blocks): 63488 operations in 5 seconds\n",
    );
    assert!(!got.contains(&9.0) && !got.contains(&65536.0), "{got:?}");
}

/// An inclusive bound is an edge, and a run of whole numbers each two
/// to ten times the one before is a scale; readings beside them stay.
#[test]
fn bounds_and_scales_are_no_results() {
    let got = values_of("* hit1(<=100us): 64% of test1's IOs took <=100us\n");
    assert_eq!(got, [64.0], "{got:?}");
    let got = values_of("Each bucket is 50us, 100us, 200us, 400us, 1ms, 2ms, 4ms, 8ms.\n");
    assert!(got.is_empty(), "{got:?}");
    let got = values_of("Latency went 150us, 180us, 210us, 260us over the runs.\n");
    assert_eq!(got.len(), 4, "{got:?}");
}

/// A size named as one (`_size=`, `size=`) and a ramp are set, not
/// measured.
#[test]
fn named_sizes_and_ramps_are_settings() {
    let got = values_of("- sysbench_db: innodb_buffer_pool_size=8G, test_size=400M, ramp=3s\n");
    assert!(got.is_empty(), "{got:?}");
}

/// A known command with shell variables for arguments is a command, not
/// a table's header (`mount $MOUNT_OPTIONS $DEV $MNT`).
#[test]
fn commands_with_shell_variables_head_no_table() {
    let got = values_of(
        "  mount $MOUNT_OPTIONS $DEV $MNT\n\n  dbench -D $MNT -t 200 40\n\n  umount $MNT\n",
    );
    assert!(got.is_empty(), "{got:?}");
}

/// A number padded with a drawn table's underscores, a value in brackets
/// glued to its name, and both ends of a change stated without a unit
/// are results.
#[test]
fn underscore_cells_glued_brackets_and_unitless_changes_are_results() {
    let got = values_of(
        "|__ fs ___|__ size ___|_ MiB/s __|\n\
         |_erofs_4k_|_556879872_|_ 781.4 __|\n\
         |_erofs_8k_|_452509696_|_ 864.8 __|\n",
    );
    assert!(
        got.contains(&556879872.0) && got.contains(&864.8),
        "{got:?}"
    );
    let got = values_of("* aq2c: average q2c, test2's aq2c(11ms) > test1's aq2c(1ms).\n");
    assert!(got.contains(&11.0) && got.contains(&1.0), "{got:?}");
    let got = values_of("We can see the IPC raised from 0.75 to 0.97 with the patch.\n");
    assert_eq!(got, [0.75, 0.97], "{got:?}");
    let got = values_of("We moved from 4 to 8 queues.\n");
    assert!(got.is_empty(), "{got:?}");
}

/// An indented pipe table whose header has no corner cell, and whose
/// last column gives approximate changes (`~32%`): the row is read, its
/// approximate change a value like any other.
#[test]
fn approximate_cells_end_a_pipe_row() {
    let t = extract_text(
        "\t    \t | IOPS (IRQ mode) | IOPS (poll mode) | diff\n\
         ---------------- | --------------- | ---------------- | ----\n\
         with patchset    |\t      212k |\t\t     284k | ~32%\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(t[0].columns.len(), 3, "{t:#?}");
    assert_eq!(t[0].columns[1].name, "IOPS (poll mode)");
    assert_eq!(t[0].rows[0].keys, ["with patchset"]);
    assert_eq!(t[0].rows[0].values[0], num(212000.0));
    assert!(
        matches!(&t[0].rows[0].values[2], Value::Number { value, .. } if *value == 32.0),
        "{:?}",
        t[0].rows[0]
    );
}

/// A Markdown table padded with no-break spaces: columns of words
/// (`RandRead 4 KiB QD1`, `round-robin`) key the rows however many there
/// are, and `143 000` is one number.
#[test]
fn word_columns_are_keys_and_spaced_thousands_one_number() {
    let t = extract_text(
        "| # | Storage | Jobs | Test | Policy | IOPS |\n\
         | -: | :--- | ---: | :--- | :--- | ---: |\n\
         |\u{a0} 1 | HDD RAID1\u{a0} |\u{a0} 1 | RandRead 4 KiB QD1\u{a0} | pid\u{a0}\u{a0} |\u{a0}\u{a0} 81 |\n\
         |\u{a0} 2 | SSD RAID10 |\u{a0} 1 | RandRead 4 KiB QD32 | round-robin | 143\u{a0}000 |\n\
         |\u{a0} 3 | SSD RAID10 |\u{a0} 1 | RandRead 4 KiB QD32 | queue | 275 456 |\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(t[0].key_columns, ["#", "Storage", "Jobs", "Test", "Policy"]);
    assert_eq!(all_numbers(&t), [81.0, 143000.0, 275456.0]);
}

/// In a table of dot decimals, `2,2` is a pair of settings that keys
/// its row, not 2.2; the ticks under an ASCII chart are no results.
#[test]
fn comma_pairs_in_a_dot_decimal_table_and_chart_ticks_are_keys() {
    let t = extract_text(
        "#no. \tOrder \t\twithout-patch(K) \twith-patch(K) \t\tDiff(%)\n\
         1\t1 \t\t16.90 \t\t\t17.51 \t\t\t+3.60\n\
         2\t2,2 \t\t32.08 \t\t\t31.80 \t\t\t-0.87\n\
         3\t6,14 \t\t 2.33 \t\t\t143.19 \t\t\t+6045.49\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(t[0].key_columns, ["#no.", "Order"]);
    assert_eq!(t[0].rows[1].keys, ["2", "2,2"]);
    assert_eq!(all_numbers(&t)[..3], [16.9, 17.51, 3.6]);
    // A line of its own keeps reading commas as decimals (`4,5%`).
    assert_eq!(values_of("It improves NAT performance by 4,5%.\n"), [4.5]);
    let chart = "   10 |-+     *      *       *                    +-|\n\
                 \x20     |       *      *       *                      |\n\
                 \x20   0 +--------------------------------------------------+\n\
                 \x20          1,1     2,2     3,3     6,14 (order,dir & files)\n";
    assert!(values_of(chart).is_empty(), "{:?}", values_of(chart));
}

/// /proc/mdstat's array and bitmap lines and mdadm's event count are
/// the array's state; its resync speed is a reading.
#[test]
fn mdstat_state_is_no_claim() {
    let got = values_of(
        "md0 : active raid6 sdf[5] sde[4] sdd[3] sdc[2] sdb[1] sda[0]\n\
         \x20     464838634496 blocks super 1.2 level 6, 512k chunk, algorithm 2 [6/6] [UUUUUU]\n\
         \x20     bitmap: 53/102 pages [212KB], 65536KB chunk\n\
         \n\
         \x20          Events : 40702\n",
    );
    assert!(got.is_empty(), "{got:?}");
}

/// Bars set apart by spaces divide a table's column groups: the names
/// before the first key the rows, however few the rows.
#[test]
fn bars_divide_column_groups_and_the_first_group_keys() {
    let t = extract_text(
        "                               | Before           | After\n\
         \x20rw         fsync jobs  bs(kB) | iops   bw(MiB/s) | iops   bw(MiB/s)\n\
         \x20------------------------------|------------------|-----------------\n\
         \x20write      1     1     4      | 4699   18.4      | 4858   18\n\
         \x20write      1     1     1024   | 245    246       | 247    248\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(t[0].key_columns, ["rw", "fsync", "jobs", "bs(kB)"]);
    assert_eq!(t[0].columns[0].name, "Before / iops");
    assert_eq!(
        all_numbers(&t),
        [4699.0, 18.4, 4858.0, 18.0, 245.0, 246.0, 247.0, 248.0]
    );
}

/// A packet trace's records (source → destination) are no results.
#[test]
fn packet_trace_records_are_no_claims() {
    let got = values_of(
        "   148 6.349609085 192.168.100.221 → 192.168.100.222 NFS 1826 V4 Call WRITE Offset: 0 Len: 262144\n\
         \x20  223 6.351592937 192.168.100.221 → 192.168.100.222 NFS 38026 V4 Call WRITE Offset: 262144 Len: 262144\n\
         12:00:01.5 IP 10.0.0.1.22 > 10.0.0.2.5555: Flags [P.], seq 1:37, length 36\n",
    );
    assert!(got.is_empty(), "{got:?}");
}

/// A device's inspection tools typed at a prompt print its identity
/// and limits, no run, until the next blank line.
#[test]
fn device_inspection_output_is_state() {
    let got = values_of(
        "$ sudo sg_vpd -p 0xb0 /dev/sdc\n\
         Block limits VPD page (SBC):\n\
         \x20 Optimal transfer length granularity: 8 blocks\n\
         \x20 Maximum transfer length: 65535 blocks\n\
         \n\
         The write took 12.5 seconds.\n",
    );
    assert_eq!(got, [12.5]);
}

/// `3.2x` glued is a ratio, a result; `4 x NVMe` apart counts things.
#[test]
fn glued_x_is_a_ratio() {
    let t = extract_text(
        "fs_size  Before   After   Improvement\n\
         1G       23s      7s\t  3.2x\n\
         8G       1252s    61s     20.52x\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(all_numbers(&t), [23.0, 7.0, 3.2, 1252.0, 61.0, 20.52]);
    assert!(values_of("The box has 4 x NVMe drives.\n").is_empty());
}

/// filefrag's output, its command shown or not, is a file's layout.
#[test]
fn filefrag_output_is_state() {
    let got = values_of(
        "    Filesystem type is: 9123683e\n\
         \x20   File size of /mnt/sdj/foo is 524288 (128 blocks of 4096 bytes)\n\
         \x20    ext:     logical_offset:        physical_offset: length:   expected: flags:\n\
         \x20      0:        0..     127:       3328..      3455:    128:             last,eof\n\
         \x20   /mnt/sdj/foo: 1 extent found\n\
         \n\
         \x20   /mnt/sdi/foobar: 327680 extents found\n\
         \x20   fiemap took 3597 milliseconds (metadata not cached)\n",
    );
    assert_eq!(got, [3597.0]);
}

/// A table drawn with box-drawing characters is read as its ASCII twin,
/// and a row that ends in words (`identical`, `-67% worse`) is a row.
#[test]
fn box_drawn_tables_and_rows_ending_in_words() {
    let t = extract_text(
        "  ┌─────────────────────────┬───────────┬───────────┬─────────────┐\n\
         \x20 │         Metric          │ Whole-BDI │ Per-Inode │   Change    │\n\
         \x20 ├─────────────────────────┼───────────┼───────────┼─────────────┤\n\
         \x20 │ Scenario C writer       │ 1468      │ 1386      │ -6%         │\n\
         \x20 ├─────────────────────────┼───────────┼───────────┼─────────────┤\n\
         \x20 │ Scenario D writer       │ 1472      │ 1467      │ identical   │\n\
         \x20 ├─────────────────────────┼───────────┼───────────┼─────────────┤\n\
         \x20 │ p99.9                   │ 46 ms     │ 77 ms     │ -67% worse  │\n\
         \x20 └─────────────────────────┴───────────┴───────────┴─────────────┘\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(t[0].rows.len(), 3, "{t:#?}");
    assert_eq!(t[0].columns[0].name, "Whole-BDI");
    assert_eq!(
        all_numbers(&t),
        [1468.0, 1386.0, -6.0, 1472.0, 1467.0, 46.0, 77.0, -67.0]
    );
}

/// A command the mailer wrapped at its pipe goes on into a filter on
/// the next line; that line is no row of the output under it.
#[test]
fn a_command_wrapped_at_its_pipe_is_no_row() {
    let t = extract_text(
        "# for i in {0..3} ; do dd if=/mnt/testfile.bin of=/dev/null bs=1M 2>&1\n\
         | grep copied ; echo 3 > /proc/sys/vm/drop_caches ; done\n\
         4294967296 bytes (4.3 GB, 4.0 GiB) copied, 16.5025 s, 260 MB/s\n\
         4294967296 bytes (4.3 GB, 4.0 GiB) copied, 16.4474 s, 261 MB/s\n",
    );
    assert!(!all_numbers(&t).contains(&3.0), "{t:#?}");
    assert!(all_numbers(&t).contains(&260.0), "{t:#?}");
}

/// A column named `min` beside `max` and `avg` is the least value, not
/// minutes: the row's `(usec)` gives the unit.
#[test]
fn a_min_column_is_no_unit() {
    let t = extract_text(
        "   before:  lat  (usec): min=6, max=16795k, avg=4470.57, stdev=265746.14\n\
         \x20  after :  lat  (usec): min=16, max=209197, avg=4120.03, stdev=27188.04\n",
    );
    assert_eq!(t.len(), 1, "{t:#?}");
    assert!(t[0].columns.iter().all(|c| c.unit.is_none()), "{t:#?}");
    assert!(
        t[0].unit.as_ref().is_none_or(|u| u.written != "min"),
        "{t:#?}"
    );
    assert!(
        t[0].rows[0].unit.as_ref().is_some_and(|u| u.symbol == "us"),
        "{t:#?}"
    );
}

/// hackbench's `Groups: 4` over its rows says what it was given.
#[test]
fn groups_name_a_parameter() {
    assert!(values_of("Groups: 4\n").is_empty());
    assert!(values_of("Groups: 16\n").is_empty());
}
