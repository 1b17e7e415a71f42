//! The identity of the device a candidate ran on ([`DeviceIdentity`]): its host name, board
//! serial, transport name, target profile and runtime, and its temperature and clock when the
//! result was written, so the results of a run spread over a pool of devices split per board.
//!
//! What must stay true: only what can be read is reported, anything else is `unknown`; `/sys`
//! and `/proc` are read only for a device that is this machine (`local`, `qemu`), never guessed
//! for a remote one.

use crate::results::DeviceIdentity;
use ekb_deploy::session::Hello;
use std::path::Path;

/// What a value that cannot be read is recorded as.
pub const UNKNOWN: &str = "unknown";

/// The identity of `device` (as the transport names it) running `hello`'s runtime for `profile`,
/// read now.
pub fn probe(device: &str, profile: &str, hello: &Hello) -> DeviceIdentity {
    probe_under(Path::new("/"), device, profile, hello)
}

/// [`probe`] with `/proc` and `/sys` read under `root` (a test's fake tree).
fn probe_under(root: &Path, device: &str, profile: &str, hello: &Hello) -> DeviceIdentity {
    let here = device == "local" || device == "qemu";
    let read = |rel: &str| here.then(|| read_trimmed(&root.join(rel))).flatten();
    let host = if here {
        read("proc/sys/kernel/hostname").unwrap_or_else(|| UNKNOWN.into())
    } else {
        remote_host(device)
    };
    let serial = read("sys/firmware/devicetree/base/serial-number")
        .or_else(|| read("sys/class/dmi/id/product_serial"))
        .unwrap_or_else(|| UNKNOWN.into());
    let temperature_c =
        here.then(|| hottest_zone(root)).flatten().map_or_else(|| UNKNOWN.into(), |c| format!("{c:.1}"));
    let clock_mhz = read("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
        .and_then(|khz| khz.parse::<u64>().ok())
        .map_or_else(|| UNKNOWN.into(), |khz| (khz / 1000).to_string());
    DeviceIdentity {
        host,
        serial,
        device: device.into(),
        profile: profile.into(),
        runtime: format!("{} {}", hello.runtime, hello.runtime_version),
        temperature_c,
        clock_mhz,
    }
}

/// The host of `ssh://[user@]host[:port]`, the serial of `adb:serial`, else the name itself.
fn remote_host(device: &str) -> String {
    if let Some(rest) = device.strip_prefix("ssh://") {
        let host = rest.rsplit('@').next().unwrap_or(rest);
        return host.split(':').next().unwrap_or(host).to_string();
    }
    device.strip_prefix("adb:").unwrap_or(device).to_string()
}

/// A file's text without surrounding whitespace or NULs (device-tree strings end in one);
/// `None` when unreadable or empty.
fn read_trimmed(path: &Path) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text);
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!text.is_empty()).then(|| text.to_string())
}

/// The highest temperature of the thermal zones, degrees Celsius (they read millidegrees).
fn hottest_zone(root: &Path) -> Option<f64> {
    let zones = std::fs::read_dir(root.join("sys/class/thermal")).ok()?;
    zones
        .filter_map(|z| z.ok())
        .filter(|z| z.file_name().to_string_lossy().starts_with("thermal_zone"))
        .filter_map(|z| read_trimmed(&z.path().join("temp"))?.parse::<i64>().ok())
        .map(|milli| milli as f64 / 1000.0)
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_wire::protocol::DeviceSummary;

    fn hello() -> Hello {
        Hello {
            version: 1,
            runtime: "ekb-rt".into(),
            runtime_version: "0.1.0".into(),
            device: DeviceSummary {
                arch: "aarch64".into(),
                cpu_model: "cortex-a76".into(),
                cores: 8,
                memory_bytes: 1 << 33,
            },
        }
    }

    #[test]
    fn a_local_device_reads_its_tree_and_a_remote_one_says_unknown() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("proc/sys/kernel/hostname", "board-7\n");
        write("sys/firmware/devicetree/base/serial-number", "9f3a21\0");
        write("sys/class/thermal/thermal_zone0/temp", "41000\n");
        write("sys/class/thermal/thermal_zone1/temp", "52500\n");
        write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2256000\n");
        let local = probe_under(root, "local", "rk3588", &hello());
        assert_eq!(
            local,
            DeviceIdentity {
                host: "board-7".into(),
                serial: "9f3a21".into(),
                device: "local".into(),
                profile: "rk3588".into(),
                runtime: "ekb-rt 0.1.0".into(),
                temperature_c: "52.5".into(),
                clock_mhz: "2256".into(),
            }
        );
        let remote = probe_under(root, "ssh://me@orin-2:2222", "jetson-orin", &hello());
        assert_eq!(remote.host, "orin-2");
        assert_eq!((remote.serial.as_str(), remote.temperature_c.as_str()), (UNKNOWN, UNKNOWN));
        assert_eq!(remote.clock_mhz, UNKNOWN);
        assert_eq!(probe_under(root, "adb:R58M", "host", &hello()).host, "R58M");
        let bare = probe_under(&root.join("missing"), "local", "host", &hello());
        assert_eq!((bare.host.as_str(), bare.temperature_c.as_str()), (UNKNOWN, UNKNOWN));
    }
}
