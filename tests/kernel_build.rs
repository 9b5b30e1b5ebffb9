//! A real kernel build from Debian's linux-source-6.12: configure, verify,
//! patch from the shared mail (fuzz 3), build, then a cache hit.

mod common;

use lab::kernel::kconfig;

#[test]
fn small_matrix_builds_before_and_after_then_hits_the_cache() {
    let first = common::small_kernels();
    let before = common::kernel(&first, "x86_64-hz100-before");
    let after = common::kernel(&first, "x86_64-hz100-after");

    for k in [&before, &after] {
        assert!(k.image.is_file(), "{} has no image", k.kernel);
        assert!(
            k.build_id.as_deref().is_some_and(|b| b.len() == 40),
            "{}: build id {:?}",
            k.kernel,
            k.build_id
        );
        let config = std::fs::read_to_string(&k.config).unwrap();
        assert_eq!(kconfig::hz(&config), Some(100));
        // Every option of the shipped fragments made it into the final config.
        let dirs = [common::repo().join("kconfigs")];
        let frags: Vec<_> = ["base", "x86_64", "hz100"]
            .iter()
            .map(|n| lab::matrix::fragments::resolve(n, &dirs).unwrap())
            .collect();
        kconfig::verify(&config, &frags, &k.source.version).unwrap();
        assert!(
            k.source.version.starts_with("6.12."),
            "{}",
            k.source.version
        );
    }
    assert!(before.patches.is_empty());
    assert_eq!(after.patches.len(), 1);
    assert!(after.patches[0].subject.contains("dm-delay"));
    assert_eq!(after.apply_method, "patch -F3");
    assert_eq!(after.fuzzed.len(), 1, "{:?}", after.fuzzed);
    assert_eq!((after.fuzzed[0].hunk, after.fuzzed[0].fuzz), (1, 3));
    assert_eq!(after.fuzzed[0].file, "drivers/md/dm-delay.c");
    // The patched kernel started from the unpatched kernel's build tree.
    assert_eq!(after.reused_tree_of.as_deref(), Some("x86_64-hz100-before"));
    assert!(
        after.objects < 100,
        "the patched build recompiled {} objects",
        after.objects
    );
    // The patch touches no Kconfig, so the rebuild reuses the root's
    // .config: its configure phase is a check, not a kconfig run. (An
    // entry built before phases were kept has none.)
    if after.phases.compile > 0.0 && before.phases.compile > 0.0 {
        assert!(after.phases.configure < 1.0, "{:?}", after.phases);
        assert!(before.phases.configure > after.phases.configure);
    }
    assert_ne!(before.key, after.key);
    assert_eq!(
        before.config_hash, after.config_hash,
        "the patch does not change the config"
    );

    let second = common::small_kernels();
    for k in &second {
        assert!(k.cached, "{} was rebuilt", k.kernel);
    }
    assert_eq!(common::kernel(&second, "x86_64-hz100-after").key, after.key);
}
