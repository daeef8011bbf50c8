//! Replicas: two `rulec serve` processes on loopback, each serving its own
//! copy of the example folder (as replicas on two machines would), behind
//! a small round-robin client, behave as one server. Their revision is
//! named by what they serve (`/contracts`, and `x-rulec-revision` on every
//! answer), so they report the same one whatever their reload history;
//! each request gets the same bytes from either; an edit that reaches both
//! gives both the same new revision; a replica whose reload fails keeps
//! its old revision, and says so, while the other serves the new one.
//!
//! The contract with windows is left out of the round robin: its state is
//! per process, so its requests need key affinity (docs/DEPLOYMENT.md).

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use support::{Reply, Served, TOKEN, post_reply, root, serve};

/// The example contracts without windows, whose requests are sent.
const CONTRACTS: [&str; 3] = ["acme.payments.transfer", "shop.orders.check", "acme.access.documents"];

/// Sends each request to the next replica in turn.
struct RoundRobin<'s> {
    replicas: [&'s Served; 2],
    next: usize,
}

impl RoundRobin<'_> {
    fn post(&mut self, body: &str) -> Reply {
        let replica = self.replicas[self.next % self.replicas.len()];
        self.next += 1;
        post_reply(&replica.addr, body)
    }
}

/// `GET /contracts` with the token, as JSON.
fn listing(replica: &Served) -> serde_json::Value {
    let mut stream = TcpStream::connect(&replica.addr).expect("connected");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    let request = format!(
        "GET /contracts HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    serde_json::from_str(body).expect("JSON")
}

fn revision(replica: &Served) -> String {
    listing(replica)["revision"].as_str().expect("a revision").to_string()
}

fn generation(replica: &Served) -> u64 {
    listing(replica)["generation"].as_u64().expect("a generation")
}

fn requests() -> Vec<String> {
    CONTRACTS
        .iter()
        .flat_map(|contract| {
            let path = root().join(format!("examples/requests/{contract}.ndjson"));
            let text = std::fs::read_to_string(path).expect("requests");
            text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect::<Vec<_>>()
        })
        .collect()
}

/// Every request through the round robin, and to each replica directly:
/// the same status, bytes and revision from all.
fn assert_replicas_agree(replicas: [&Served; 2], revision: &str) {
    let mut round_robin = RoundRobin { replicas, next: 0 };
    for request in requests() {
        let balanced = round_robin.post(&request);
        assert_eq!(balanced.header("x-rulec-revision"), Some(revision), "{request}");
        for replica in replicas {
            let direct = post_reply(&replica.addr, &request);
            assert_eq!(direct.status, balanced.status, "{request}");
            assert!(
                direct.body == balanced.body,
                "{request}\n  one: {}\n  other: {}",
                String::from_utf8_lossy(&direct.body),
                String::from_utf8_lossy(&balanced.body)
            );
            assert_eq!(direct.header("x-rulec-revision"), Some(revision), "{request}");
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("a folder") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copied");
        }
    }
}

/// Writes `name` in `dir` beside, then renames it into place (a reload
/// sees the old file or the new one).
fn replace(dir: &Path, name: &str, text: &str) {
    let temporary = dir.join(format!(".{name}.tmp"));
    std::fs::write(&temporary, text).expect("written");
    std::fs::rename(&temporary, dir.join(name)).expect("renamed");
}

/// Waits until `replica` loaded a set past generation `before`.
fn wait_for_reload(replica: &Served, before: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while generation(replica) <= before {
        assert!(Instant::now() < deadline, "no reload after generation {before}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `replica`'s `/contracts` shows a failed reload.
fn wait_for_failure(replica: &Served) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let listing = listing(replica);
        if !listing["last_reload_error"].is_null() {
            return listing;
        }
        assert!(Instant::now() < deadline, "the failed reload never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_replicas_answer_alike_and_agree_on_their_revision() {
    let folders = [tempfile::tempdir().expect("a folder"), tempfile::tempdir().expect("a folder")];
    for folder in &folders {
        copy_dir(&root().join("examples/contracts"), folder.path());
    }
    let path = |i: usize| folders[i].path().to_str().expect("UTF-8").to_string();
    let (one, other) = (serve(&path(0)), serve(&path(1)));
    let first = revision(&one);
    assert!(first.starts_with("sha256:"), "{first}");
    assert_eq!(revision(&other), first, "replicas of the same files report one revision");
    assert_replicas_agree([&one, &other], &first);

    // One replica's history differs: an edit and its revert, two reloads.
    let transfer = "acme.payments.transfer.yaml";
    let text = std::fs::read_to_string(folders[0].path().join(transfer)).expect("the contract");
    let edited = text.replacen("version: 1.0.0", "version: 1.1.0", 1);
    assert_ne!(edited, text);
    replace(folders[0].path(), transfer, &edited);
    wait_for_reload(&one, 1);
    assert_ne!(revision(&one), first, "another contract is another revision");
    replace(folders[0].path(), transfer, &text);
    wait_for_reload(&one, 2);
    assert_eq!(revision(&one), first, "the same contracts again, the same revision");
    assert_eq!((generation(&one), generation(&other)), (3, 1));
    assert_replicas_agree([&one, &other], &first);

    // An edit that reaches both: both serve the same new revision.
    for (folder, replica) in folders.iter().zip([&one, &other]) {
        let before = generation(replica);
        replace(folder.path(), transfer, &edited);
        wait_for_reload(replica, before);
    }
    let second = revision(&one);
    assert_ne!(second, first);
    assert_eq!(revision(&other), second, "both replicas took the same set");
    assert_replicas_agree([&one, &other], &second);
    let answer = post_reply(&one.addr, &requests()[0]);
    assert!(String::from_utf8_lossy(&answer.body).contains(r#""version":"1.1.0""#));

    // A broken set reaches one replica, a good one the other: the first
    // keeps serving (and naming) the old revision, and says why.
    replace(folders[0].path(), transfer, &text.replacen("rules:", "rules: [", 1));
    let before = generation(&other);
    replace(folders[1].path(), transfer, &text);
    wait_for_reload(&other, before);
    let failed = wait_for_failure(&one);
    assert_eq!(failed["revision"], second.as_str(), "{failed}");
    let message = failed["last_reload_error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(transfer), "{failed}");
    assert_eq!(revision(&other), first, "{}", listing(&other));
    let request = &requests()[0];
    assert_eq!(post_reply(&one.addr, request).header("x-rulec-revision"), Some(second.as_str()));
    assert_eq!(post_reply(&other.addr, request).header("x-rulec-revision"), Some(first.as_str()));
}
