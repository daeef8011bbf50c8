//! Parser tests: one `check` helper, a table of inputs and their trees.

use super::*;

fn check(input: &str) -> String {
    let text = ScalarText::detached(input);
    match parse(&text) {
        Ok(expr) => expr.to_sexp(),
        Err(d) => format!("{}: {} at {:?}", d.code.id(), d.message, d.span()),
    }
}

#[test]
fn precedence_and_associativity() {
    let cases = [
        ("a || b && c", "(a || (b && c))"),
        ("a && b == c", "(a && (b == c))"),
        ("a == b ?? c", "(a == (b ?? c))"),
        ("a ?? b ?? c", "(a ?? (b ?? c))"),
        ("a ?? b + c", "(a ?? (b + c))"),
        ("a - b - c", "((a - b) - c)"),
        ("a + b * c % d", "(a + ((b * c) % d))"),
        ("!a.b[0]", "(!a.b[0])"),
        ("-x * 2", "((-x) * 2)"),
        ("c ? a : b ? d : e", "(c ? a : (b ? d : e))"),
        ("x not in t", "(x not in t)"),
        ("x in [1, 2]", "(x in [1, 2])"),
        ("any(xs, x => x > 1)", "any(xs, x => (x > 1))"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("12.50 + 1.5e3", "(12.50 + 1500.0)"),
        ("'it\\'s' + \"a\\tb\"", "(\"it's\" + \"a\\tb\")"),
        ("rules.single_limit", "rules.single_limit"),
    ];
    for (input, expected) in cases {
        assert_eq!(check(input), expected, "{input}");
    }
}

#[test]
fn errors_say_what_was_expected() {
    let cases = [
        ("a <", "E0300: expected an expression, found the end at 3..3"),
        ("a < b < c", "E0300: comparisons do not chain at 6..7"),
        ("(a", "E0300: expected `)`, found the end at 2..2"),
        ("a = b", "E0300: unexpected character `=` at 2..3"),
        ("x.f(1)", "E0300: only functions can be called at 3..4"),
        ("x => x", "E0508: a lambda can only be an argument of `any`, `all`, `count` or `sum` at 0..1"),
        ("99999999999999999999", "E0302: \"99999999999999999999\" does not fit an int (64-bit) at 0..20"),
        (
            "0.12345678901234567890123456789",
            "E0302: \"0.12345678901234567890123456789\" does not fit a decimal exactly (at most 28 places, and at most 79228162514264337593543950335 without the point) at 0..31",
        ),
        ("'abc", "E0300: unterminated string at 0..1"),
        ("'\\q'", "E0302: unknown escape `\\q` in a string at 1..3"),
        ("", "E0300: expected an expression, found nothing at 0..0"),
        ("a b", "E0300: expected the end of the expression, found `b` at 2..3"),
    ];
    for (input, expected) in cases {
        assert_eq!(check(input), expected, "{input}");
    }
}

#[test]
fn limits_are_enforced_without_overflowing_the_stack() {
    let nested = format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(check(&nested).starts_with("E0301"));
    let chain = vec!["a"; 50_000].join(" + ");
    assert!(check(&chain).starts_with("E0301"));
    let unary = format!("{}a", "!".repeat(10_000));
    assert!(check(&unary).starts_with("E0301"));
    let huge = "a".repeat(10 * 1024 * 1024);
    assert!(check(&huge).starts_with("E0301: the expression is 10485760 bytes long"));
}
