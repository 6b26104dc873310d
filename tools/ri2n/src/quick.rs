// SPDX-License-Identifier: GPL-2.0

//! `ri2n up` and `ri2n down`: a device, its ports, parameters, key and
//! addresses from one file, as `wg-quick` does for WireGuard.
//!
//! The file is `/etc/ri2n/NAME.conf` (or a path ending in `NAME.conf`),
//! `key = value` lines, `#` comments:
//!
//! ```text
//! ports = eth0 eth1          # required, in this order
//! address = 10.0.0.1/24      # any number
//! mtu = 8992                 # else ri2n0 follows its ports
//! key_file = /etc/ri2n/ri2n0.key   # 32 hex digits, mode 600
//! hbspan = 2000              # any parameter of `ri2n set`
//! ```
//!
//! Everything that can be checked before a change is: the device must not
//! exist, each port must exist and be nobody's port, the key file must be
//! its owner's alone, every value within its range. Then the device is
//! made; if any later step fails, it is deleted again, which gives its
//! ports back as they were: nothing is left half-made.

use ri2n_core::params::{Param, SPECS};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `ri2n up NAME` finds NAME's file.
pub const CONF_DIR: &str = "/etc/ri2n";

/// A device as its file describes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Conf {
    pub name: String,
    pub ports: Vec<String>,
    pub addresses: Vec<String>,
    pub mtu: Option<u32>,
    pub key_file: Option<PathBuf>,
    /// (netlink attribute, value), in the file's order.
    pub params: Vec<(u16, u32)>,
}

/// `NAME` or a path to `NAME.conf`: the file and the device's name.
pub fn locate(arg: &str) -> Result<(PathBuf, String), String> {
    let path = if arg.contains('/') || arg.ends_with(".conf") {
        PathBuf::from(arg)
    } else {
        Path::new(CONF_DIR).join(format!("{arg}.conf"))
    };
    let name = path
        .file_name()
        .and_then(|f| f.to_str())
        .and_then(|f| f.strip_suffix(".conf"))
        .ok_or_else(|| format!("{}: the file's name must be DEVICE.conf", path.display()))?
        .to_string();
    check_ifname(&name).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, name))
}

/// The kernel's rule for an interface name (dev_valid_name).
fn check_ifname(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 15 || name == "." || name == ".." {
        return Err(format!("{name:?} is no interface name (1 to 15 bytes)"));
    }
    if name
        .bytes()
        .any(|b| b == b'/' || b == b':' || b.is_ascii_whitespace())
    {
        return Err(format!(
            "{name:?} is no interface name (no '/', ':' or blank)"
        ));
    }
    Ok(())
}

/// Parses the text of `name`'s file; `what` names the file in errors.
pub fn parse(name: &str, what: &str, text: &str) -> Result<Conf, String> {
    let mut c = Conf {
        name: name.to_string(),
        ports: Vec::new(),
        addresses: Vec::new(),
        mtu: None,
        key_file: None,
        params: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{what}:{}", i + 1);
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!("{at}: not `key = value`: {line}"));
        };
        let (k, v) = (k.trim(), v.trim());
        if v.is_empty() {
            return Err(format!("{at}: {k} has no value"));
        }
        if k != "address" && seen.contains(&k) {
            return Err(format!("{at}: {k} given twice"));
        }
        seen.push(k);
        match k {
            "ports" => {
                c.ports = v
                    .split([' ', '\t', ','])
                    .filter(|p| !p.is_empty())
                    .map(String::from)
                    .collect();
                for p in &c.ports {
                    check_ifname(p).map_err(|e| format!("{at}: port {e}"))?;
                    if c.ports.iter().filter(|q| *q == p).count() > 1 {
                        return Err(format!("{at}: port {p} listed twice"));
                    }
                }
            }
            "address" => {
                let ok = v.split_once('/').is_some_and(|(ip, len)| {
                    let max = match ip.parse::<std::net::IpAddr>() {
                        Ok(std::net::IpAddr::V4(_)) => 32,
                        Ok(std::net::IpAddr::V6(_)) => 128,
                        Err(_) => return false,
                    };
                    len.parse::<u32>().is_ok_and(|l| l <= max)
                });
                if !ok {
                    return Err(format!("{at}: address {v} is not ADDRESS/PREFIXLEN"));
                }
                c.addresses.push(v.to_string());
            }
            "mtu" => {
                c.mtu = Some(
                    v.parse::<u32>()
                        .ok()
                        .filter(|m| (68..=65535).contains(m))
                        .ok_or_else(|| format!("{at}: mtu {v} is not 68..=65535"))?,
                );
            }
            "key_file" => c.key_file = Some(PathBuf::from(v)),
            _ => {
                let Some(i) = SPECS.iter().position(|s| s.name == k) else {
                    let names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
                    return Err(format!(
                        "{at}: no such key {k} (ports, address, mtu, key_file, {})",
                        names.join(", ")
                    ));
                };
                let s = &SPECS[i];
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (s.min..=s.max).contains(n))
                    .ok_or_else(|| {
                        format!("{at}: {k} {v} is not {}..={} {}", s.min, s.max, s.unit)
                    })?;
                c.params.push((Param::ALL[i].attr(), n));
            }
        }
    }
    if c.ports.is_empty() {
        return Err(format!("{what}: no ports (ports = eth0 eth1)"));
    }
    Ok(c)
}

/// A key file's key: 32 hex digits, whitespace aside. `strict` refuses a
/// file others than its owner may read (else only warns).
pub fn read_key(file: &Path, strict: bool) -> Result<[u8; 16], String> {
    use std::os::unix::fs::PermissionsExt;
    let f = file.display();
    let meta = std::fs::metadata(file).map_err(|e| format!("{f}: {e}"))?;
    if meta.permissions().mode() & 0o077 != 0 {
        let msg = format!("{f} is readable by others than its owner (chmod 600 it)");
        if strict {
            return Err(msg);
        }
        eprintln!("ri2n: warning: {msg}");
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("{f}: {e}"))?;
    let hex: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes: Option<Vec<u8>> = (hex.len() == 32 && hex.is_ascii())
        .then(|| {
            (0..16)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                .collect()
        })
        .flatten();
    bytes
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| format!("{f}: a key is 32 hex digits (128 bits)"))
}

fn sys(dev: &str) -> PathBuf {
    Path::new("/sys/class/net").join(dev)
}

/// What must hold before anything changes.
pub fn precheck(c: &Conf) -> Result<Option<[u8; 16]>, String> {
    if sys(&c.name).exists() {
        return Err(format!(
            "{} exists already (ri2n down {} first)",
            c.name, c.name
        ));
    }
    for p in &c.ports {
        if !sys(p).exists() {
            return Err(format!("port {p}: no such device"));
        }
        if let Ok(m) = std::fs::read_link(sys(p).join("master")) {
            let owner = m
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(format!("port {p} is a port of {owner} already"));
        }
    }
    c.key_file.as_deref().map(|k| read_key(k, true)).transpose()
}

/// Runs `ip ARGS`; its own message on failure.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(format!("ip {}: {}", args.join(" "), err.trim()))
}

/// Applies (attribute, value) parameters and a key to the device over the
/// driver's netlink family.
pub type SetFn<'a> = dyn Fn(&[(u16, u32)], Option<[u8; 16]>) -> Result<(), String> + 'a;

/// The steps after the device exists; `set` applies parameters and key
/// over the driver's netlink family.
fn configure(c: &Conf, key: Option<[u8; 16]>, set: &SetFn<'_>) -> Result<(), String> {
    if !c.params.is_empty() || key.is_some() {
        set(&c.params, key)?;
    }
    for p in &c.ports {
        ip(&["link", "set", p, "master", &c.name])?;
    }
    if let Some(m) = c.mtu {
        ip(&["link", "set", &c.name, "mtu", &m.to_string()])?;
    }
    ip(&["link", "set", &c.name, "up"])?;
    for a in &c.addresses {
        ip(&["addr", "add", a, "dev", &c.name])?;
    }
    Ok(())
}

/// `ri2n up`: makes the device, or changes nothing.
pub fn up(c: &Conf, set: &SetFn<'_>) -> Result<(), String> {
    let key = precheck(c)?;
    ip(&["link", "add", &c.name, "type", "ri2n"])?;
    configure(c, key, set).map_err(|e| {
        // Deleting the device releases its ports as they were found.
        match ip(&["link", "del", &c.name]) {
            Ok(()) => format!("{e} ({} deleted again)", c.name),
            Err(d) => format!("{e}; and deleting {} again failed: {d}", c.name),
        }
    })
}

/// `ri2n down`: deletes the device, which must be a ri2n one.
pub fn down(name: &str) -> Result<(), String> {
    if !sys(name).join("ri2n").is_dir() {
        return Err(format!("{name}: no such ri2n device"));
    }
    ip(&["link", "del", name])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Conf, String> {
        parse("ri2n0", "ri2n0.conf", text)
    }

    #[test]
    fn a_whole_file() {
        let c = p(
            "# comment\nports = eth0, eth1 # two\naddress = 10.0.0.1/24\naddress = fd00::1/64\n\
                   mtu = 8992\nkey_file = /etc/ri2n/k\nhbspan = 700\nfast_tout = 9\n",
        )
        .unwrap();
        assert_eq!(c.ports, ["eth0", "eth1"]);
        assert_eq!(c.addresses, ["10.0.0.1/24", "fd00::1/64"]);
        assert_eq!(c.mtu, Some(8992));
        assert_eq!(c.key_file.as_deref(), Some(Path::new("/etc/ri2n/k")));
        let hb = SPECS.iter().position(|s| s.name == "hbspan").unwrap();
        let ft = SPECS.iter().position(|s| s.name == "fast_tout").unwrap();
        assert_eq!(
            c.params,
            [(Param::ALL[hb].attr(), 700), (Param::ALL[ft].attr(), 9)]
        );
    }

    #[test]
    fn each_bad_line_is_named() {
        for (text, says) in [
            ("hbspan = 700\n", "no ports"),
            (
                "ports = eth0\nhbspan = 5\n",
                "ri2n0.conf:2: hbspan 5 is not 10..=3600000 ms",
            ),
            ("ports = eth0\nhbspan = x\n", "hbspan x is not"),
            ("ports = eth0\nfoo = 1\n", "ri2n0.conf:2: no such key foo"),
            ("ports = eth0\nports = eth1\n", "ports given twice"),
            ("ports = eth0 eth0\n", "port eth0 listed twice"),
            (
                "ports = eth0\naddress = 10.0.0.1\n",
                "is not ADDRESS/PREFIXLEN",
            ),
            (
                "ports = eth0\naddress = 10.0.0.1/33\n",
                "is not ADDRESS/PREFIXLEN",
            ),
            ("ports = eth0\nmtu = 40\n", "mtu 40 is not 68..=65535"),
            ("ports = eth0\nmtu\n", "not `key = value`"),
            ("ports =\n", "ports has no value"),
            ("ports = this_name_is_too_long\n", "no interface name"),
        ] {
            let e = p(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e:?} lacks {says:?}");
        }
    }

    #[test]
    fn names_come_from_the_file() {
        assert_eq!(
            locate("ri2n0").unwrap(),
            (PathBuf::from("/etc/ri2n/ri2n0.conf"), "ri2n0".into())
        );
        assert_eq!(locate("./x/clu1.conf").unwrap().1, "clu1");
        assert!(locate("/etc/ri2n/a_very_long_name_indeed.conf").is_err());
        assert!(locate("/etc/ri2n/ri2n0.cfg").is_err());
    }

    #[test]
    fn a_key_file_is_its_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let d = std::env::temp_dir().join(format!("ri2n-quick-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("k");
        std::fs::write(&f, "00112233445566778899aabbccddeeff\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_key(&f, true).unwrap_err().contains("chmod 600"));
        assert_eq!(read_key(&f, false).unwrap()[15], 0xff);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_key(&f, true).unwrap()[0], 0x00);
        std::fs::write(&f, "0011").unwrap();
        assert!(read_key(&f, true).unwrap_err().contains("32 hex digits"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
