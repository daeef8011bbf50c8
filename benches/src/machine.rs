//! What a report was measured on: CPU, cores, rustc and commit.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub rustc: String,
    pub commit: String,
}

impl Machine {
    /// Reads the machine's description; unknown parts say so.
    pub fn detect() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|s| s.trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let run = |cmd: &str, args: &[&str]| {
            std::process::Command::new(cmd)
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rustc: run("rustc", &["--version"]).unwrap_or_else(|| "unknown rustc".into()),
            commit: run("git", &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into()),
        }
    }
}
