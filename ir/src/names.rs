//! The spelling rules for names, shared by the compiler and the verifier,
//! and the one rule for suggesting a name close to a misspelt one.

/// Rule, let, table, effect, channel, component and extern ids:
/// `[a-z][a-z0-9_]*`.
pub fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z')) && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'))
}

/// Input and record field names, which mirror JSON keys:
/// `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_field_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'A'..=b'Z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Contract names: dot-separated identifiers, e.g. `acme.payments.transfer`.
pub fn is_contract_name(name: &str) -> bool {
    !name.is_empty() && name.split('.').all(is_identifier)
}

/// Finding codes: `[A-Z][A-Z0-9_]*`.
pub fn is_finding_code(code: &str) -> bool {
    let mut bytes = code.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z')) && bytes.all(|b| matches!(b, b'A'..=b'Z' | b'0'..=b'9' | b'_'))
}

/// Semantic versions: `MAJOR.MINOR.PATCH`, optionally `-pre` and `+build`
/// with dot-separated alphanumeric identifiers.
pub fn is_semver(version: &str) -> bool {
    let (rest, build) = match version.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let numeric = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
    };
    let labels = |text: &str| {
        text.split('.')
            .all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| numeric(p)) && pre.is_none_or(labels) && build.is_none_or(labels)
}

/// Names the language reserves: they cannot name a let, a field or a table.
pub const RESERVED: [&str; 4] = ["rules", "windows", "true", "false"];

/// The candidate closest to `name`, if it is close enough to be a typo:
/// at most a third of the longer name's length (in bytes, at least one)
/// apart, by Damerau-Levenshtein distance; the nearest wins, a tie going
/// to the name first in alphabetical order. Every "did you mean" uses it:
/// the compiler's diagnostics and the runtime's unknown contract.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let length = name.chars().count();
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .filter_map(|c| {
            let limit = (name.len().max(c.len()) / 3).max(1);
            // The distance is at least the difference in length: a name far
            // longer than every candidate (a request's 200 KB one) is never
            // compared character by character.
            if length.abs_diff(c.chars().count()) > limit {
                return None;
            }
            let distance = strsim::damerau_levenshtein(name, c);
            (distance <= limit).then_some((distance, c))
        })
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_rules() {
        assert!(is_identifier("single_limit") && !is_identifier("Single") && !is_identifier("_x"));
        assert!(is_field_name("accountAge") && is_field_name("_x") && !is_field_name("1x"));
        assert!(is_contract_name("acme.payments.transfer") && !is_contract_name("acme..x"));
        assert!(is_finding_code("CROSS_BORDER") && !is_finding_code("cross"));
        for ok in ["1.0.0", "0.10.3-rc.1", "1.2.3+build.5", "1.2.3-alpha-1"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["1.0", "01.0.0", "1.0.0-", "v1.0.0", "1.0.0-a..b"] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn the_closest_name_is_a_likely_typo_or_none() {
        let names = ["acme.payments.transfer", "acme.access.documents", "shop.orders.check"];
        let cases = [
            ("acme.payments.transfr", Some("acme.payments.transfer")),
            ("acme.payment.transfer", Some("acme.payments.transfer")),
            ("shop.order.check", Some("shop.orders.check")),
            ("acme.payments.transfer", None),
            ("nope", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(closest(name, names), want, "{name:?}");
        }
        let huge = "x".repeat(200 * 1024);
        assert_eq!(closest(&huge, names), None);
        assert_eq!(closest("ab", ["ac", "ab2", "aa"]), Some("aa"), "a tie goes to the first in order");
    }
}
