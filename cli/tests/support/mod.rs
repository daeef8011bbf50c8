//! Helpers shared by the tests that run `rulec` as a process: the binary
//! started in the workspace root, two runs' outputs compared, the Python
//! tools that write test files probed and run, and `rulec serve` started
//! on a loopback port, with a POST helper; transfer records varied from
//! the examples.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The token the served test servers require.
pub const TOKEN: &str = "t0ken";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

/// `rulec`, run in the workspace root, without a token in its environment.
pub fn rulec() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rulec"));
    command.current_dir(root()).env_remove("RULEC_TOKEN").env_remove("RUST_LOG");
    command
}

/// Two runs of `rulec` exited alike and printed the same results.
pub fn assert_same_output(what: &str, got: &Output, expected: &Output) {
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), expected.status.code(), "{what}: {stderr}");
    assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&expected.stdout), "{what}");
}

/// Whether `python3 -c "import {modules}"` works. Under `CI` it must
/// (`.ci/run` installs the modules), so a missing one fails the test;
/// elsewhere the caller skips what needs them, and this says so.
pub fn python_can_import(modules: &str) -> bool {
    let found = Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(found || std::env::var_os("CI").is_none(), "python3 cannot import {modules} (see .ci/run)");
    if !found {
        println!("skipped: python3 cannot import {modules}");
    }
    found
}

/// The program `name` on `PATH`. Under `CI` it must be there (`.ci/run`
/// installs it, from `package`), so a missing one fails the test;
/// elsewhere the caller skips what needs it, and this says so.
pub fn installed(name: &str, package: &str) -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(name))
        .find(|path| path.is_file());
    assert!(
        found.is_some() || std::env::var_os("CI").is_none(),
        "{name} is missing (.ci/run installs {package})"
    );
    if found.is_none() {
        println!("skipped: {name} is not installed");
    }
    found
}

/// Runs the Python script `script` with `args` in the workspace root;
/// its failure fails the test (`what`, and the script's stderr).
pub fn run_python<A: AsRef<OsStr>>(what: &str, script: impl AsRef<OsStr>, args: impl IntoIterator<Item = A>) {
    let out =
        Command::new("python3").arg(script).args(args).current_dir(root()).output().expect("python3 runs");
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A server process, the address it logged, the log up to that line,
/// and the rest of its log.
pub struct Served {
    pub child: Child,
    pub addr: String,
    pub started: String,
    pub log: BufReader<std::process::ChildStderr>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `rulec serve --rules RULES` on a free loopback port, with the JIT and
/// [`TOKEN`]; returns once it logs that it is serving.
pub fn serve(rules: &str) -> Served {
    serve_with(rules, &[])
}

/// [`serve`] with more flags.
pub fn serve_with(rules: &str, flags: &[&str]) -> Served {
    let mut child = rulec()
        .args(["serve", "--rules", rules, "--addr", "127.0.0.1:0", "--engine", "jit"])
        .args(flags)
        .env("RULEC_TOKEN", TOKEN)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("rulec serve starts");
    let mut log = BufReader::new(child.stderr.take().expect("stderr"));
    let mut started = String::new();
    let addr = loop {
        let mut line = String::new();
        assert!(log.read_line(&mut line).expect("a log line") > 0, "the server exited before serving");
        started.push_str(&line);
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if event["message"] == "serving" {
            break event["addr"].as_str().expect("the address").to_string();
        }
    };
    Served { child, addr, started, log }
}

/// POSTs `body` to `/evaluations`; returns the response body.
pub fn post(addr: &str, body: &str) -> String {
    String::from_utf8_lossy(&post_reply(addr, body).body).into_owned()
}

/// A response: its status, its head's header lines, its body's bytes.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// POSTs `body` to `/evaluations` (`Connection: close`, so the body is
/// what follows the head up to the end).
pub fn post_reply(addr: &str, body: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("connected");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    let request = format!(
        "POST /evaluations HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read");
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok());
    let headers = lines
        .filter_map(|l| l.split_once(':').map(|(n, v)| (n.trim().to_string(), v.trim().to_string())))
        .collect();
    Reply { status: status.unwrap_or(0), headers, body: response[split + 4..].to_vec() }
}

/// `count` transfer records with an `id`, varied from the examples
/// (amounts, KYC levels, countries, a currency the contract refuses).
pub fn transfer_records(count: usize) -> Vec<String> {
    let examples =
        std::fs::read_to_string(root().join("cli/tests/data/records.ndjson")).expect("the examples");
    let examples: Vec<serde_json::Value> =
        examples.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let countries = ["DE", "FR", "US", "IR", "AF", "CH"];
    let currencies = ["EUR", "USD", "GBP", "CHF", "JPY"];
    (0..count)
        .map(|i| {
            let mut record = examples[i % examples.len()].clone();
            record["id"] = serde_json::json!(i);
            record["amount"] = serde_json::json!(format!("{}.{:02}", (i * 37) % 20_000, i % 100));
            record["currency"] = serde_json::json!(currencies[(i / 7) % currencies.len()]);
            record["source"]["kyc_level"] = serde_json::json!(i % 4);
            record["source"]["account_age_days"] = serde_json::json!((i * 13) % 400);
            record["destination"]["country"] = serde_json::json!(countries[(i / 3) % countries.len()]);
            serde_json::to_string(&record).expect("JSON")
        })
        .collect()
}
