//! The contract set, each behaviour a table of cases: routing and its
//! messages, the request line to result line path, and loading a folder
//! (dot-files and dot-folders skipped, folders walked to any depth,
//! bundles beside YAML, names defined twice).

use std::path::Path;

use runtime::contract_set::{FileKind, LineOutcome, LoadFailure, walk};
use runtime::{Bundle, ContractSet, Engine};

/// A contract called `name` that denies amounts over 10.
fn contract(name: &str) -> String {
    format!(
        "contract: {name}\nversion: 1.0.0\ninput:\n  amount: int\nrules:\n  - id: big\n    when: amount > 10\n    deny: \"big\"\n"
    )
}

fn bundle(name: &str) -> Bundle {
    frontend::compile(&contract(name)).expect("the contract compiles")
}

fn set(names: &[&str]) -> ContractSet {
    let engine = Engine::builder().build();
    let contracts = names.iter().map(|name| engine.load(bundle(name)).expect("loads")).collect();
    ContractSet::new(contracts).expect("no name twice")
}

fn compile(path: &Path, text: &str) -> Result<Bundle, String> {
    let compiled = frontend::compile_file(&path.display().to_string(), text);
    compiled.bundle.ok_or_else(|| compiled.diagnostics.render(false))
}

#[test]
fn a_request_is_routed_to_the_contract_it_names_or_told_which_exist() {
    let three = set(&["acme.payments.transfer", "acme.access.documents", "shop.orders.check"]);
    let listed = "acme.access.documents, acme.payments.transfer, shop.orders.check";
    let ten: Vec<String> = (0..10).map(|i| format!("t.c{i}")).collect();
    let ten = set(&ten.iter().map(String::as_str).collect::<Vec<_>>());
    let one = set(&["t.only"]);
    let none = ContractSet::default();
    let cases: [(&ContractSet, Option<&str>, Result<&str, String>); 8] = [
        (&three, Some("shop.orders.check"), Ok("shop.orders.check")),
        (
            &three,
            Some("acme.payments.transfr"),
            Err(format!(
                "no contract \"acme.payments.transfr\" is loaded; did you mean `acme.payments.transfer`? (loaded: {listed})"
            )),
        ),
        (&three, Some("nope"), Err(format!("no contract \"nope\" is loaded (loaded: {listed})"))),
        (&three, None, Err(format!("several contracts are loaded ({listed}): name one in `contract`"))),
        (&one, None, Ok("t.only")),
        (
            &ten,
            Some("x.y"),
            Err("no contract \"x.y\" is loaded (loaded: t.c0, t.c1, t.c2, t.c3, t.c4, t.c5, t.c6, t.c7, and 2 more)"
                .into()),
        ),
        (&none, None, Err("no contract is loaded".into())),
        (&none, Some("t.a"), Err("no contract \"t.a\" is loaded (loaded: none)".into())),
    ];
    for (set, name, want) in cases {
        let got = set.route(name).map(|c| c.name()).map_err(|e| e.to_string());
        assert_eq!(got, want.as_deref().map_err(Clone::clone), "{name:?}");
    }
}

#[test]
fn a_request_line_becomes_its_result_line() {
    let set = set(&["t.a", "t.b"]);
    let deny = LineOutcome::Evaluated(ir::Verdict::Deny);
    let cases: [(&[u8], LineOutcome, Option<&str>, &str); 7] = [
        (
            br#"{"contract":"t.b","input":{"amount":50}}"#,
            deny,
            Some("t.b"),
            r#"{"contract":"t.b","version":"1.0.0","decision":"deny","#,
        ),
        (
            br#"{"contract":"t.c","input":{}}"#,
            LineOutcome::UnknownContract,
            None,
            r#"{"error":{"kind":"unknown_contract","message":"no contract \"t.c\" is loaded; did you mean `t.a`? (loaded: t.a, t.b)"}}"#,
        ),
        (
            br#"{"input":{"amount":1}}"#,
            LineOutcome::Invalid,
            None,
            r#"{"error":{"kind":"invalid_input","details":[{"path":"contract","message":"several contracts are loaded (t.a, t.b): name one in `contract`"}]}}"#,
        ),
        (
            br#"{"contract":"t.a","input":{"amount":"x"}}"#,
            LineOutcome::Invalid,
            Some("t.a"),
            r#"{"error":{"kind":"invalid_input","details":[{"path":"input.amount","#,
        ),
        (
            br#"{"contract":"t.a"}"#,
            LineOutcome::Invalid,
            Some("t.a"),
            r#"{"error":{"kind":"invalid_input","details":[{"path":"input","message":"missing"}]}}"#,
        ),
        (
            b"not json",
            LineOutcome::Invalid,
            None,
            r#"{"error":{"kind":"invalid_input","details":[{"path":"","message":"not a valid request: "#,
        ),
        (
            b"{\"contract\":\"t.a\xff\"}",
            LineOutcome::Invalid,
            None,
            r#"{"error":{"kind":"invalid_input","details":[{"path":"","message":"not a valid request: not UTF-8 (invalid byte at offset 16)"}]}}"#,
        ),
    ];
    for (line, outcome, contract, start) in cases {
        let mut out = Vec::new();
        let got = set.evaluate_line(line, None, &mut out);
        let text = String::from_utf8_lossy(&out);
        assert_eq!(got.outcome, outcome, "{text}");
        assert_eq!(got.contract.map(|c| c.name()), contract, "{text}");
        assert!(text.starts_with(start), "{text}\ndoes not start with\n{start}");
    }
}

#[test]
fn a_contract_alone_answers_as_a_set_of_one() {
    let set = set(&["t.a"]);
    let alone = &set.contracts()[0];
    let lines = [
        r#"{"input":{"amount":50}}"#,
        r#"{"contract":"t.a","input":{"amount":5}}"#,
        r#"{"input":{"amount":true}}"#,
        "[]",
    ];
    for line in lines {
        let (mut from_set, mut from_contract) = (Vec::new(), Vec::new());
        set.evaluate_line(line.as_bytes(), None, &mut from_set);
        alone.evaluate_json(line, &mut from_contract);
        assert_eq!(String::from_utf8_lossy(&from_set), String::from_utf8_lossy(&from_contract), "{line}");
    }
}

/// A folder to load: each file's path and what it holds: a contract's
/// name (its YAML, or its bundle for `.bundle.json`), `BROKEN` (YAML that
/// does not compile) or text.
struct Folder {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The files found and the names loaded, or the error (`$DIR` for
    /// the folder).
    want: Result<(&'static [&'static str], &'static [&'static str]), &'static str>,
}

const BROKEN: &str = "BROKEN";

const FOLDERS: &[Folder] = &[
    Folder {
        name: "dot-files and dot-folders are skipped; folders are walked to any depth",
        files: &[
            ("a.yaml", "t.a"),
            (".b.yaml", BROKEN),
            (".a.yaml.swp", BROKEN),
            (".git/c.yaml", BROKEN),
            ("sub/.hidden/d.yaml", BROKEN),
            ("sub/e.yml", "t.e"),
            ("sub/deeper/f.yaml", "t.f"),
            ("sub/g.bundle.json", "t.g"),
            ("notes.txt", "not a contract"),
            ("sub/h.json", "{}"),
        ],
        want: Ok((
            &["a.yaml", "sub/deeper/f.yaml", "sub/e.yml", "sub/g.bundle.json"],
            &["t.a", "t.e", "t.f", "t.g"],
        )),
    },
    Folder {
        name: "a bundle beside its YAML defines the contract twice",
        files: &[("x.yaml", "t.x"), ("x.bundle.json", "t.x")],
        want: Err("error: $DIR/x.bundle.json and $DIR/x.yaml both define the contract `t.x`"),
    },
    Folder {
        name: "one name in two folders",
        files: &[("one/a.yaml", "t.a"), ("two/a.yaml", "t.a"), ("two/b.yaml", "t.b")],
        want: Err("error: $DIR/one/a.yaml and $DIR/two/a.yaml both define the contract `t.a`"),
    },
    Folder {
        name: "a copy in a dot-folder is no duplicate",
        files: &[("a.yaml", "t.a"), (".old/a.yaml", "t.a")],
        want: Ok((&["a.yaml"], &["t.a"])),
    },
    Folder {
        name: "a folder of dot-files holds nothing",
        files: &[(".a.yaml", "t.a"), (".rules/b.yaml", "t.b")],
        want: Err(
            "$DIR holds no contracts (`.yaml`, `.yml`) or bundles (`.bundle.json`) (names starting with `.` are skipped)",
        ),
    },
];

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        let bytes = match *content {
            BROKEN => b"contract: broken\nrules: [".to_vec(),
            name if name.starts_with("t.") && FileKind::of(&path) == Some(FileKind::Bundle) => {
                bundle(name).to_json()
            }
            name if name.starts_with("t.") => contract(name).into_bytes(),
            text => text.as_bytes().to_vec(),
        };
        std::fs::write(&path, bytes).expect("written");
    }
}

#[test]
fn a_folder_loads_as_one_set() {
    for folder in FOLDERS {
        let dir = tempfile::tempdir().expect("a folder");
        write(dir.path(), folder.files);
        let root = dir.path().to_path_buf();
        let shown = |text: String| text.replace(&root.display().to_string(), "$DIR");
        let engine = Engine::builder().build();
        let loaded = ContractSet::load(&engine, std::slice::from_ref(&root), &mut compile);
        match folder.want {
            Ok((files, names)) => {
                let found = walk::find(std::slice::from_ref(&root), &[FileKind::Contract, FileKind::Bundle]);
                let found: Vec<String> = found
                    .expect("found")
                    .iter()
                    .map(|f| f.path.strip_prefix(&root).expect("inside").display().to_string())
                    .collect();
                assert_eq!(found, files, "{}", folder.name);
                let set = loaded.unwrap_or_else(|e| panic!("{}: {e}", folder.name));
                assert_eq!(set.names().collect::<Vec<_>>(), names, "{}", folder.name);
            }
            Err(want) => {
                let failure = loaded.expect_err(folder.name);
                assert_eq!(shown(failure.to_string()), want, "{}", folder.name);
                let io = want.contains("holds no");
                assert_eq!(matches!(failure, LoadFailure::Io(_)), io, "{}", folder.name);
            }
        }
    }
}

#[test]
fn a_file_named_directly_is_taken_whatever_its_name() {
    let dir = tempfile::tempdir().expect("a folder");
    write(dir.path(), &[(".hidden.yaml", "t.a"), ("rules.txt", "t.b")]);
    let paths = [dir.path().join(".hidden.yaml"), dir.path().join("rules.txt")];
    let engine = Engine::builder().build();
    let set = ContractSet::load(&engine, &paths, &mut compile).expect("loads");
    assert_eq!(set.names().collect::<Vec<_>>(), ["t.a", "t.b"]);
    let missing = [dir.path().join("no-such.yaml")];
    let failure = ContractSet::load(&engine, &missing, &mut compile).expect_err("no such file");
    assert!(matches!(&failure, LoadFailure::Io(m) if m.starts_with("cannot read ")), "{failure}");
}
