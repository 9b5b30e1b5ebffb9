use super::*;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn parse(text: &str) -> Result<Matrix> {
    Matrix::parse(&repo().join("matrices/test.yaml"), text)
}

const SMALL: &str = "\
version: 1
name: small
variants:
  - name: before
  - name: after
    patches:
      - message-id: small-test@example.org
kernel_axes:
  arch: [x86_64]
  hz: {100: [hz100], 1000: [hz1000]}
run_axes:
  delay: [1, 20]
setup:
  - dm: {name: d, target: delay, device: /dev/nullb0, read_ms: \"{{ delay }}\", write_ms: \"{{ delay * 2 }}\"}
workload:
  fio: {filename: /dev/mapper/d, rw: write, number_ios: 10}
";

fn err_of(text: &str) -> String {
    format!("{:#}", parse(text).unwrap_err())
}

#[test]
fn dm_delay_matrix_plans_12_kernels_and_the_four_delays() {
    let m = Matrix::load(&repo().join("matrices/dm-delay.yaml")).unwrap();
    let p = m.plan().unwrap();
    assert_eq!(p.kernels.len(), 12);
    assert_eq!(p.boots.len(), 12);
    assert_eq!(p.cells.len(), 48);
    let ids: Vec<&str> = p.kernels.iter().map(|k| k.id.as_str()).collect();
    assert!(ids.contains(&"x86_64-hz100-before"));
    assert!(ids.contains(&"arm64-hz1000-after"));
    let delays: Vec<String> = p
        .cells
        .iter()
        .filter(|c| c.kernel == "x86_64-hz100-after")
        .map(|c| c.run_axes.get("delay").unwrap().to_string())
        .collect();
    assert_eq!(delays, ["1", "2", "5", "20"]);
    // The patched kernel starts from the unpatched one's tree.
    assert_eq!(
        p.kernel("x86_64-hz100-after")
            .unwrap()
            .base_kernel
            .as_deref(),
        Some("x86_64-hz100-before")
    );
    assert_eq!(p.kernel("x86_64-hz100-before").unwrap().base_kernel, None);
    // Fragments in merge order: base, the arch's own, then hz.
    let frags: Vec<&str> = p
        .kernel("arm64-hz250-before")
        .unwrap()
        .fragments
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(frags, ["base", "arm64", "hz250"]);
    // Three interleaved repetition blocks.
    assert_eq!(p.schedule.len(), 36);
    assert_eq!(p.schedule[0].boot, p.schedule[12].boot);
}

#[test]
fn ids_are_stable_and_templates_render_per_cell() {
    let p = parse(SMALL).unwrap().plan().unwrap();
    let c = p
        .cells
        .iter()
        .find(|c| c.id == "x86_64-hz1000-after:delay=20")
        .unwrap();
    let SetupStep::Dm(dm) = &c.setup[0] else {
        panic!()
    };
    assert_eq!(dm.read_ms.as_ref().unwrap().to_string(), "20");
    assert_eq!(dm.write_ms.as_ref().unwrap().to_string(), "40");
    assert_eq!(c.axes.get("variant").unwrap().to_string(), "after");
}

#[test]
fn filter_selects_a_slice_and_keeps_the_base_kernel_to_build_from() {
    let m = parse(SMALL).unwrap();
    let p = m.plan().unwrap();
    let f = Filter::parse("hz=100,variant=after").unwrap();
    f.check(&m, &p).unwrap();
    let s = f.apply(&p);
    assert_eq!(s.cells.len(), 2);
    assert_eq!(s.boots.len(), 1);
    let ks: Vec<&str> = s.kernels.iter().map(|k| k.id.as_str()).collect();
    assert_eq!(ks, ["x86_64-hz100-before", "x86_64-hz100-after"]);
}

#[test]
fn filter_rejects_unknown_keys_and_values() {
    let m = parse(SMALL).unwrap();
    let p = m.plan().unwrap();
    let e = Filter::parse("hz=99")
        .unwrap()
        .check(&m, &p)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hz=99 matches nothing") && e.contains("100, 1000"),
        "{e}"
    );
    let e = Filter::parse("zz=1")
        .unwrap()
        .check(&m, &p)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'zz' is not an axis"), "{e}");
    assert!(Filter::parse("arch").is_err());
}

#[test]
fn unknown_key_names_file_line_column_and_key() {
    let e = err_of(&SMALL.replace("name: small", "name: small\nrepetitons: 3"));
    assert!(e.contains("test.yaml:3:1"), "{e}");
    assert!(e.contains("repetitons"), "{e}");
}

#[test]
fn wrong_type_names_file_line_column() {
    let e = err_of(&SMALL.replace("name: small", "name: small\nrepetitions: many"));
    assert!(e.contains("test.yaml:3:"), "{e}");
    assert!(
        e.contains("many") || e.contains("integer") || e.contains("invalid"),
        "{e}"
    );
}

#[test]
fn unknown_fragment_is_located() {
    let e = err_of(&SMALL.replace("1000: [hz1000]", "1000: [hz1001]"));
    assert!(e.contains("unknown fragment 'hz1001'"), "{e}");
    assert!(e.contains("test.yaml:10:"), "{e}");
}

#[test]
fn empty_axis_is_located() {
    let e = err_of(&SMALL.replace("delay: [1, 20]", "delay: []"));
    assert!(e.contains("axis 'delay' is empty"), "{e}");
    assert!(e.contains("test.yaml:12:"), "{e}");
}

#[test]
fn duplicate_variant_is_located() {
    let e = err_of(&SMALL.replace("  - name: after", "  - name: before"));
    assert!(e.contains("duplicate variant name 'before'"), "{e}");
    assert!(e.contains("test.yaml:5:"), "{e}");
}

#[test]
fn undefined_template_variable_fails_at_plan_time() {
    let e = err_of(&SMALL.replace("{{ delay * 2 }}", "{{ dely }}"));
    assert!(e.contains("cell x86_64-hz100-before:delay=1"), "{e}");
    assert!(e.contains("dely"), "{e}");
}

#[test]
fn unknown_arch_and_version_are_located() {
    let e = err_of(&SMALL.replace("[x86_64]", "[riscv]"));
    assert!(
        e.contains("unknown arch 'riscv'") && e.contains("test.yaml:9:"),
        "{e}"
    );
    let e = err_of(&SMALL.replace("version: 1", "version: 2"));
    assert!(e.contains("test.yaml:1:") && e.contains("version 2"), "{e}");
}

#[test]
fn boot_axes_multiply_boots_not_kernels() {
    let text = SMALL.replace(
        "run_axes:",
        "boot_axes:\n  pq: [0, 2]\nboot:\n  cmdline: \"nvme.poll_queues={{ pq }}\"\nrun_axes:",
    );
    let p = parse(&text).unwrap().plan().unwrap();
    assert_eq!(p.kernels.len(), 4);
    assert_eq!(p.boots.len(), 8);
    let b = p.boot("x86_64-hz100-before@pq=2").unwrap();
    assert_eq!(b.cmdline, "nvme.poll_queues=2");
    assert!(
        p.cells
            .iter()
            .any(|c| c.id == "x86_64-hz100-before@pq=2:delay=20")
    );
}

#[test]
fn non_interleaved_schedule_runs_repetitions_back_to_back() {
    let text = SMALL.replace("run_axes:", "repetitions: 2\nrun_axes:");
    let p = parse(&text).unwrap().plan().unwrap();
    assert_eq!(p.schedule[0].boot, p.schedule[1].boot);
    assert_eq!((p.schedule[0].rep, p.schedule[1].rep), (1, 2));
    let text = SMALL.replace("run_axes:", "repetitions: 2\ninterleave: true\nrun_axes:");
    let p = parse(&text).unwrap().plan().unwrap();
    assert_ne!(p.schedule[0].boot, p.schedule[1].boot);
}

#[test]
fn yaml_is_read_as_1_2_so_n_and_off_stay_words() {
    // YAML 1.1 would read `n` as false and `off` as false.
    let m = parse(
        &SMALL
            .replace(
                "delay: [1, 20]",
                "delay: [1, 20]\n  n: [1, 2]\n  mode: [on, off]",
            )
            .replace(
                "number_ios: 10}",
                "number_ios: 10, description: \"{{ n }} {{ mode }}\"}",
            ),
    )
    .unwrap();
    let p = m.plan().unwrap();
    let ids: Vec<&str> = p.cells.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ids.contains(&"x86_64-hz100-before:delay=1,n=2,mode=off"),
        "{ids:?}"
    );
    // A bool field takes true/false only, and the error says where.
    let e = err_of(&format!("{SMALL}interleave: yes\n"));
    assert!(e.contains("test.yaml:"), "{e}");
    assert!(
        e.contains(&format!(":{}:", SMALL.lines().count() + 1)),
        "{e}"
    );
}

#[test]
fn a_label_of_a_direction_names_fio_rw() {
    use schema::fio_rw_named as rw;
    for (label, want) in [
        ("overwrite", Some("write")),
        ("rand overwrite", Some("randwrite")),
        ("randread", Some("randread")),
        ("Random Read", Some("randread")),
        ("seq-write", Some("write")),
        ("seqread", Some("read")),
        ("mixed", Some("rw")),
        ("randrw", Some("randrw")),
        ("read/write", Some("rw")),
        ("trim", Some("trim")),
        // Not a direction alone: a metric, a size, a design.
        ("read IOPS", None),
        ("4k read", None),
        ("random", None),
        ("", None),
        ("rand seq read", None),
    ] {
        assert_eq!(rw(label), want, "{label}");
    }
}
