//! Device-mapper targets: the one place each target's fields, table
//! line and kernel config are written. The matrix's `dm:` step stays a
//! flat map (`target: delay`, `device:`, `read_ms:` ...), which reads
//! well in YAML; [`DmTarget::from_def`] turns it into this enum, and the
//! plan checks, the guest's setup and `lab new` all work from the enum.
//! A new target is a variant here, an arm in each `match` below (the
//! compiler lists them), and its tests.

use super::schema::{DmDef, SetupStep};
use super::{Fragment, Scalar};

/// A device-mapper target with its arguments, or a raw table.
#[derive(Clone, Debug, PartialEq)]
pub enum DmTarget {
    /// dm-delay: reads, writes and (optionally) flushes each delayed by
    /// their own milliseconds, each to their own device.
    Delay {
        device: String,
        read_ms: Scalar,
        write_ms: Option<Scalar>,
        write_device: Option<String>,
        flush_device: Option<String>,
        flush_ms: Option<Scalar>,
    },
    /// dm-linear over one whole device.
    Linear { device: String },
    /// dm-flakey: `up_s` seconds working, then `down_s` failing every I/O.
    Flakey {
        device: String,
        up_s: Scalar,
        down_s: Scalar,
    },
    /// dm-dust: a pass-through that fails the blocks it is told to
    /// (`dmsetup message NAME 0 addbadblock N`); 512-byte blocks.
    Dust { device: String },
    /// dm-zero: reads zeros, swallows writes.
    Zero,
    /// dm-error: fails every I/O.
    Error,
    /// A table passed to `dmsetup create --table` as written.
    Table(String),
}

/// The targets a matrix may name, as `dm.target` spells them.
pub const TARGETS: [&str; 6] = ["delay", "linear", "flakey", "dust", "zero", "error"];

impl DmTarget {
    /// The typed target of a (rendered) `dm:` step, or what is wrong with
    /// it, naming the key.
    pub fn from_def(x: &DmDef) -> Result<DmTarget, String> {
        let target = match (x.target.as_deref(), &x.table) {
            (None, Some(table)) => DmTarget::Table(table.clone()),
            (Some(_), Some(_)) => return Err("dm: give either target or table, not both".into()),
            (None, None) => return Err("dm: needs a target or a table".into()),
            (Some(t), None) => DmTarget::named(t, x)?,
        };
        // Only dm-delay takes a second and a third device; one given to
        // any other target, or beside a raw table, is a mistake the
        // author would want to hear of. (Numbers for another target, such
        // as `read_ms` on linear, have always been ignored.)
        if !matches!(target, DmTarget::Delay { .. }) {
            let on = match &target {
                DmTarget::Table(_) => "a raw table".to_string(),
                t => format!("target {}", t.name()),
            };
            for (k, set) in [
                ("write_device", x.write_device.is_some()),
                ("flush_device", x.flush_device.is_some()),
            ] {
                if set {
                    return Err(format!("dm.{k} does not belong to {on}"));
                }
            }
        }
        Ok(target)
    }

    /// The target `dm.target: t` names, with the keys it needs.
    fn named(t: &str, x: &DmDef) -> Result<DmTarget, String> {
        let device = || {
            x.device
                .clone()
                .ok_or_else(|| format!("dm.device: target {t} needs a device"))
        };
        Ok(match t {
            "delay" => DmTarget::Delay {
                device: device()?,
                read_ms: x.read_ms.clone().unwrap_or(Scalar::Int(0)),
                write_ms: x.write_ms.clone(),
                write_device: x.write_device.clone(),
                flush_device: x.flush_device.clone(),
                flush_ms: x.flush_ms.clone(),
            },
            "linear" => DmTarget::Linear { device: device()? },
            "flakey" => {
                let (Some(up_s), Some(down_s)) = (x.up_s.clone(), x.down_s.clone()) else {
                    return Err("dm: target flakey needs up_s and down_s".into());
                };
                DmTarget::Flakey {
                    device: device()?,
                    up_s,
                    down_s,
                }
            }
            "dust" => DmTarget::Dust { device: device()? },
            "zero" => DmTarget::Zero,
            "error" => DmTarget::Error,
            o => {
                return Err(format!(
                    "dm.target: unknown target '{o}' (use {}, or give a raw table)",
                    TARGETS.join(", ")
                ));
            }
        })
    }

    /// dm-delay with one delay for reads and writes, as most mails use it.
    pub fn delay(device: String, ms: Scalar) -> DmTarget {
        DmTarget::Delay {
            device,
            read_ms: ms.clone(),
            write_ms: Some(ms),
            write_device: None,
            flush_device: None,
            flush_ms: None,
        }
    }

    /// Apply `f` to every text the target holds (devices, numbers as
    /// written, a raw table): `lab new` puts templates into them.
    pub fn for_each_text(&mut self, mut f: impl FnMut(&mut String)) {
        fn num(v: &mut Scalar, f: &mut impl FnMut(&mut String)) {
            let mut s = v.to_string();
            f(&mut s);
            *v = Scalar::Str(s);
        }
        match self {
            DmTarget::Delay {
                device,
                read_ms,
                write_ms,
                write_device,
                flush_device,
                flush_ms,
            } => {
                for v in [Some(read_ms), write_ms.as_mut(), flush_ms.as_mut()]
                    .into_iter()
                    .flatten()
                {
                    num(v, &mut f);
                }
                for d in [Some(device), write_device.as_mut(), flush_device.as_mut()]
                    .into_iter()
                    .flatten()
                {
                    f(d);
                }
            }
            DmTarget::Flakey {
                device,
                up_s,
                down_s,
            } => {
                num(up_s, &mut f);
                num(down_s, &mut f);
                f(device);
            }
            DmTarget::Linear { device } | DmTarget::Dust { device } => f(device),
            DmTarget::Table(t) => f(t),
            DmTarget::Zero | DmTarget::Error => {}
        }
    }

    /// The name `dm.target` gives it; `table` for a raw table.
    pub fn name(&self) -> &'static str {
        match self {
            DmTarget::Delay { .. } => "delay",
            DmTarget::Linear { .. } => "linear",
            DmTarget::Flakey { .. } => "flakey",
            DmTarget::Dust { .. } => "dust",
            DmTarget::Zero => "zero",
            DmTarget::Error => "error",
            DmTarget::Table(_) => "table",
        }
    }

    /// The device its size comes from, when it has one.
    pub fn device(&self) -> Option<&str> {
        match self {
            DmTarget::Delay { device, .. }
            | DmTarget::Linear { device }
            | DmTarget::Flakey { device, .. }
            | DmTarget::Dust { device } => Some(device),
            DmTarget::Zero | DmTarget::Error | DmTarget::Table(_) => None,
        }
    }

    /// The same device, to rename it.
    pub fn device_mut(&mut self) -> Option<&mut String> {
        match self {
            DmTarget::Delay { device, .. }
            | DmTarget::Linear { device }
            | DmTarget::Flakey { device, .. }
            | DmTarget::Dust { device } => Some(device),
            DmTarget::Zero | DmTarget::Error | DmTarget::Table(_) => None,
        }
    }

    /// The target's part of the table line, after `<start> <sectors>`;
    /// for a raw table, the whole table.
    pub fn table(&self) -> String {
        match self {
            // <dev> <off> <delay> [<wdev> <woff> <wdelay> [<fdev> <foff> <fdelay>]]
            DmTarget::Delay {
                device,
                read_ms,
                write_ms,
                write_device,
                flush_device,
                flush_ms,
            } => {
                let w = write_ms.as_ref().unwrap_or(read_ms);
                let wdev = write_device.as_ref().unwrap_or(device);
                let mut t = format!("delay {device} 0 {read_ms} {wdev} 0 {w}");
                if flush_device.is_some() || flush_ms.is_some() {
                    let fdev = flush_device.as_ref().unwrap_or(wdev);
                    t.push_str(&format!(" {fdev} 0 {}", flush_ms.as_ref().unwrap_or(w)));
                }
                t
            }
            DmTarget::Linear { device } => format!("linear {device} 0"),
            DmTarget::Flakey {
                device,
                up_s,
                down_s,
            } => format!("flakey {device} 0 {up_s} {down_s}"),
            // <dev> <offset> <blksz>
            // <dev> <offset> <blksz>
            DmTarget::Dust { device } => format!("dust {device} 0 512"),
            DmTarget::Zero => "zero".into(),
            DmTarget::Error => "error".into(),
            DmTarget::Table(t) => t.clone(),
        }
    }

    /// The kernel options the target needs beyond device-mapper itself
    /// (linear and error are part of dm core). A raw table's target is
    /// the table's business.
    pub fn kconfig(&self) -> &'static [&'static str] {
        match self {
            DmTarget::Delay { .. } => &["CONFIG_DM_DELAY=y"],
            DmTarget::Flakey { .. } => &["CONFIG_DM_FLAKEY=y"],
            DmTarget::Dust { .. } => &["CONFIG_DM_DUST=y"],
            DmTarget::Zero => &["CONFIG_DM_ZERO=y"],
            DmTarget::Linear { .. } | DmTarget::Error | DmTarget::Table(_) => &[],
        }
    }

    /// The flat `dm:` keys that write this target back into a matrix,
    /// in the order a person would write them (`lab new`).
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut f = match self {
            DmTarget::Table(t) => return vec![("table", t.clone())],
            t => vec![("target", t.name().to_string())],
        };
        if let Some(d) = self.device() {
            f.push(("device", d.to_string()));
        }
        match self {
            DmTarget::Delay {
                read_ms,
                write_ms,
                write_device,
                flush_device,
                flush_ms,
                ..
            } => {
                f.push(("read_ms", read_ms.to_string()));
                let opt = [
                    ("write_ms", write_ms.as_ref().map(|s| s.to_string())),
                    ("write_device", write_device.clone()),
                    ("flush_device", flush_device.clone()),
                    ("flush_ms", flush_ms.as_ref().map(|s| s.to_string())),
                ];
                f.extend(opt.into_iter().filter_map(|(k, v)| Some((k, v?))));
            }
            DmTarget::Flakey { up_s, down_s, .. } => {
                f.push(("up_s", up_s.to_string()));
                f.push(("down_s", down_s.to_string()));
            }
            _ => {}
        }
        f
    }
}

/// The kernel options that the setup's dm targets need and that no
/// fragment of the matrix sets, as one fragment (`dm-targets`). None when
/// every one is there, so a matrix whose fragments have them (the
/// built-in base has delay and zero) keeps its kernels' cache keys. A
/// templated target (`target: "{{ t }}"`) is not known before the cells
/// are rendered and adds nothing.
pub fn config_fragment(steps: &[SetupStep], have: &[Fragment]) -> Option<Fragment> {
    let lines = steps
        .iter()
        .flat_map(|step| match step {
            SetupStep::Dm(d) => DmTarget::from_def(d).map_or(&[][..], |t| t.kconfig()),
            _ => &[],
        })
        .copied();
    super::fragments::implied(
        "dm-targets",
        "implied by the setup's dm targets",
        lines,
        have,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(target: &str) -> DmDef {
        DmDef {
            name: "d".into(),
            target: Some(target.into()),
            device: Some("/dev/nullb0".into()),
            ..Default::default()
        }
    }

    #[test]
    fn each_named_target_parses_and_gives_its_table_and_config() {
        let mut seen = Vec::new();
        for name in TARGETS {
            let mut d = def(name);
            if name == "flakey" {
                d.up_s = Some(Scalar::Int(5));
                d.down_s = Some(Scalar::Int(1));
            }
            let t = DmTarget::from_def(&d).unwrap();
            assert_eq!(t.name(), name);
            assert!(t.table().starts_with(name), "{}", t.table());
            seen.push((name, t.table(), t.kconfig().join(" ")));
        }
        assert_eq!(
            seen,
            [
                (
                    "delay",
                    "delay /dev/nullb0 0 0 /dev/nullb0 0 0".into(),
                    "CONFIG_DM_DELAY=y".into()
                ),
                ("linear", "linear /dev/nullb0 0".into(), String::new()),
                (
                    "flakey",
                    "flakey /dev/nullb0 0 5 1".into(),
                    "CONFIG_DM_FLAKEY=y".into()
                ),
                (
                    "dust",
                    "dust /dev/nullb0 0 512".into(),
                    "CONFIG_DM_DUST=y".into()
                ),
                ("zero", "zero".into(), "CONFIG_DM_ZERO=y".into()),
                ("error", "error".into(), String::new()),
            ]
        );
    }

    #[test]
    fn wrong_combinations_name_the_key() {
        let e = |d: DmDef| DmTarget::from_def(&d).unwrap_err();
        let mut d = def("linear");
        d.device = None;
        assert_eq!(e(d), "dm.device: target linear needs a device");
        let mut d = def("linear");
        d.write_device = Some("/dev/nullb1".into());
        assert_eq!(e(d), "dm.write_device does not belong to target linear");
        let mut d = def("zero");
        d.target = None;
        d.table = Some("0 8 zero".into());
        d.flush_device = Some("/dev/nullb1".into());
        assert_eq!(e(d), "dm.flush_device does not belong to a raw table");
        assert_eq!(e(def("flakey")), "dm: target flakey needs up_s and down_s");
        assert!(e(def("striped")).starts_with(
            "dm.target: unknown target 'striped' (use delay, linear, flakey, dust, zero"
        ));
        let mut d = def("zero");
        d.table = Some("0 8 zero".into());
        assert_eq!(e(d), "dm: give either target or table, not both");
    }

    #[test]
    fn fields_write_back_what_from_def_reads() {
        let mut d = def("delay");
        d.read_ms = Some(Scalar::Str("{{ delay }}".into()));
        d.flush_ms = Some(Scalar::Int(3));
        let t = DmTarget::from_def(&d).unwrap();
        assert_eq!(
            t.fields(),
            [
                ("target", "delay".to_string()),
                ("device", "/dev/nullb0".into()),
                ("read_ms", "{{ delay }}".into()),
                ("flush_ms", "3".into()),
            ]
        );
        assert_eq!(
            t.table(),
            "delay /dev/nullb0 0 {{ delay }} /dev/nullb0 0 {{ delay }} /dev/nullb0 0 3"
        );
        let raw = DmTarget::Table("0 8 zero".into());
        assert_eq!(raw.fields(), [("table", "0 8 zero".to_string())]);
    }

    #[test]
    fn the_config_a_target_needs_is_added_only_when_no_fragment_has_it() {
        let base = Fragment {
            name: "base".into(),
            origin: "built-in:base".into(),
            text: "CONFIG_BLK_DEV_DM=y\nCONFIG_DM_DELAY=y\nCONFIG_DM_ZERO=y\n".into(),
        };
        let steps =
            |ts: &[&str]| -> Vec<SetupStep> { ts.iter().map(|t| SetupStep::Dm(def(t))).collect() };
        assert_eq!(
            config_fragment(&steps(&["zero", "delay"]), std::slice::from_ref(&base)),
            None
        );
        let mut flakey = def("flakey");
        flakey.up_s = Some(Scalar::Int(5));
        flakey.down_s = Some(Scalar::Int(1));
        let mut more = steps(&["delay", "{{ t }}"]);
        more.extend([SetupStep::Dm(flakey.clone()), SetupStep::Dm(flakey)]);
        let f = config_fragment(&more, &[base]).unwrap();
        assert_eq!(
            (f.name.as_str(), f.text.as_str()),
            ("dm-targets", "CONFIG_DM_FLAKEY=y\n")
        );
    }
}
