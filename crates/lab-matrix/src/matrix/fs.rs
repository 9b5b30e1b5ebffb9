//! File systems a setup can make and mount: the one table of the kernel
//! options each needs. The matrix adds them as a `file-systems` fragment
//! when no fragment sets them, and `lab new` writes them into a draft's
//! fragment, so neither keeps its own list.

use super::Fragment;
use super::schema::SetupStep;

/// The options a file system needs built in, by the name `mkfs` and
/// `mount` take. tmpfs is in the built-in base; a name not listed here
/// (`nfs`, `vfat`) is the matrix's own business, through its fragments.
pub fn kconfig(fs: &str) -> &'static [&'static str] {
    match fs {
        "xfs" => &["CONFIG_XFS_FS=y"],
        "ext4" | "ext3" | "ext2" => &["CONFIG_EXT4_FS=y"],
        "btrfs" => &["CONFIG_BTRFS_FS=y"],
        "f2fs" => &["CONFIG_F2FS_FS=y"],
        _ => &[],
    }
}

/// The options the setup's `mkfs` and `mount` steps need and no fragment
/// sets, as one fragment (`file-systems`). A templated name
/// (`fs: "{{ fs }}"`) counts as every value it renders to over `axes`
/// (name, values): the kernel is shared by the cells of every value.
pub fn config_fragment(
    steps: &[SetupStep],
    have: &[Fragment],
    axes: &[(String, Vec<serde_json::Value>)],
) -> Option<Fragment> {
    let names: Vec<String> = steps
        .iter()
        .filter_map(|step| match step {
            SetupStep::Mkfs(m) => Some(m.fs.as_str()),
            SetupStep::Mount(m) => m.fs.as_deref(),
            _ => None,
        })
        .flat_map(|fs| super::template::render_each(fs, axes))
        .collect();
    let lines = names.iter().flat_map(|fs| kconfig(fs)).copied();
    super::fragments::implied(
        "file-systems",
        "implied by the setup's mkfs and mount steps",
        lines,
        have,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::schema::{MkfsDef, MountDef};

    #[test]
    fn a_file_system_the_setup_makes_or_mounts_is_added_unless_a_fragment_has_it() {
        let mkfs = |fs: &str| {
            SetupStep::Mkfs(MkfsDef {
                fs: fs.into(),
                device: "/dev/nullb0".into(),
                options: String::new(),
            })
        };
        let mount = |fs: Option<&str>| {
            SetupStep::Mount(MountDef {
                device: "/dev/nullb0".into(),
                dir: "/mnt/t".into(),
                fs: fs.map(Into::into),
                options: String::new(),
            })
        };
        let steps = [
            mkfs("xfs"),
            mount(Some("xfs")),
            mount(None),
            mkfs("{{ fs }}"),
        ];
        let f = config_fragment(&steps, &[], &[]).unwrap();
        assert_eq!(
            (f.name.as_str(), f.text.as_str()),
            ("file-systems", "CONFIG_XFS_FS=y\n")
        );
        let axes = [(
            "fs".to_string(),
            vec![serde_json::json!("btrfs"), serde_json::json!("ext4")],
        )];
        let f = config_fragment(&steps, &[], &axes).unwrap();
        assert_eq!(
            f.text,
            "CONFIG_XFS_FS=y\nCONFIG_BTRFS_FS=y\nCONFIG_EXT4_FS=y\n"
        );
        let ext4 = Fragment {
            name: "ext4".into(),
            origin: "built-in:ext4".into(),
            text: "# ext4\nCONFIG_EXT4_FS=y\n".into(),
        };
        assert_eq!(
            config_fragment(&[mkfs("ext3"), mount(Some("ext4"))], &[ext4], &[]),
            None
        );
        assert_eq!(config_fragment(&[mount(Some("tmpfs"))], &[], &[]), None);
    }
}
