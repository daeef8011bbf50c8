//! Hot reload over loopback: a broken contract leaves the old set serving,
//! and a folder that flips between two rule sets a few hundred times
//! while clients send continuously never gives a mixed or failed answer,
//! each set always under its one revision (named by its content).

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::TestServer;

/// A one-contract rule set whose version and default decision tell which
/// set answered.
fn contract(version: &str, default: &str) -> String {
    format!(
        "contract: flip\nversion: {version}\ndecision: deny-overrides\ndefault: {default}\non_error: deny\n\
         input:\n  n: int\nrules:\n  - id: big\n    when: n > 100\n    finding: {{ code: BIG, severity: info, message: \"{{n}} is big\" }}\n"
    )
}

/// Replaces `name` in `dir` atomically (a reader sees the old file or the
/// new one).
fn write(dir: &Path, name: &str, text: &str) {
    let temporary = dir.join(format!(".{name}.tmp"));
    std::fs::write(&temporary, text).expect("written");
    std::fs::rename(&temporary, dir.join(name)).expect("renamed");
}

/// Which set the server loaded: 1 at start, one more per reload.
fn generation(server: &TestServer) -> u64 {
    let listing: serde_json::Value = serde_json::from_slice(&server.get("/contracts").body).expect("JSON");
    listing["generation"].as_u64().expect("a generation")
}

/// Waits until the served generation is past `before`.
fn wait_for_reload(server: &TestServer, before: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = generation(server);
        if now > before {
            return now;
        }
        assert!(Instant::now() < deadline, "no reload after generation {before}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn server_for(text: &str) -> TestServer {
    let dir = tempfile::tempdir().expect("a folder");
    write(dir.path(), "flip.yaml", text);
    TestServer::start_in(dir, |_| {})
}

#[test]
fn a_broken_contract_leaves_the_old_set_serving() {
    let server = server_for(&contract("1.0.0", "allow"));
    write(server.dir.path(), "broken.yaml", "contract: broken\nversion: 1.0.0\nrules: [");
    // The failure shows in /contracts once the reload has run.
    let deadline = Instant::now() + Duration::from_secs(20);
    let listing = loop {
        let listing: serde_json::Value =
            serde_json::from_slice(&server.get("/contracts").body).expect("JSON");
        if !listing["last_reload_error"].is_null() {
            break listing;
        }
        assert!(Instant::now() < deadline, "the failed reload never showed");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(listing["generation"], 1);
    let revision = listing["revision"].clone();
    assert!(listing["last_reload_error"]["message"].as_str().is_some_and(|m| m.contains("broken.yaml")));
    let answer = server.post(r#"{"input":{"n":5}}"#);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(server.get("/metrics").text().contains("rulec_reload_failures_total 1"));
    // Fixing the folder serves the new set.
    std::fs::remove_file(server.dir.path().join("broken.yaml")).expect("removed");
    assert!(wait_for_reload(&server, 1) > 1);
    let listing: serde_json::Value = serde_json::from_slice(&server.get("/contracts").body).expect("JSON");
    assert!(listing["last_reload_error"].is_null());
    // The same contracts again: the same revision, from their content.
    assert_eq!(listing["revision"], revision);
}

#[test]
fn reloads_under_load_never_mix_sets_or_fail() {
    let server = Arc::new(server_for(&contract("1.0.0", "allow")));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..2)
        .map(|_| {
            let (server, stop) = (server.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let answer = server.post(r#"{"input":{"n":500}}"#);
                    let result: serde_json::Value = serde_json::from_slice(&answer.body).unwrap_or_default();
                    let revision = answer.header("x-rulec-revision").unwrap_or("").to_string();
                    seen.push((
                        answer.status,
                        revision,
                        result["version"].as_str().unwrap_or("").to_string(),
                    ));
                }
                seen
            })
        })
        .collect();
    let mut served = generation(&server);
    let flips = 200;
    for k in 0..flips {
        let (version, default) = if k % 2 == 0 { ("2.0.0", "deny") } else { ("1.0.0", "allow") };
        write(server.dir.path(), "flip.yaml", &contract(version, default));
        served = wait_for_reload(&server, served);
    }
    stop.store(true, Ordering::Relaxed);
    let mut by_revision: HashMap<String, String> = HashMap::new();
    let (mut answers, mut switches) = (0, 0);
    for client in clients {
        let seen = client.join().expect("a client");
        switches += seen.windows(2).filter(|pair| pair[0].2 != pair[1].2).count();
        for (status, revision, version) in seen {
            answers += 1;
            assert_eq!(status, 200, "revision {revision}");
            let first = by_revision.entry(revision.clone()).or_insert_with(|| version.clone());
            assert_eq!(*first, version, "revision {revision} answered with two rule sets");
        }
    }
    assert!(served > flips, "every flip reloaded: generation {served}");
    assert!(answers > flips as usize, "the clients kept sending: {answers} answers");
    // Two rule sets, so two revisions, whatever the number of reloads.
    assert_eq!(by_revision.len(), 2, "{by_revision:?}");
    assert!(switches > 10, "answers came from many reloads: {switches} switches");
}
