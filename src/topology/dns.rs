//! The DNS name of every topology service, once: the Kubernetes Service and
//! Deployment name, the Compose service name, and the host that
//! `retrylint serve --resolve dns` dials to reach a callee. The exporter and
//! `serve` both call [`dns_names`], so a manifest and the process inside it
//! cannot disagree about where a service lives.
//!
//! The rule, in order:
//!
//! 1. A name that already is a valid label — 1 to 63 characters of
//!    `[a-z0-9-]`, starting with a letter and ending with a letter or digit
//!    (RFC 1035, which Kubernetes requires of Service names; every such
//!    label is also an RFC 1123 label) — is kept exactly as it is.
//! 2. Any other name is mapped: ASCII letters are lowercased, every run of
//!    characters outside `[a-z0-9]` becomes one `-`, and `-` is trimmed at
//!    both ends (`Payments_API` → `payments-api`, `cart.v2` → `cart-v2`).
//!    A result that does not start with a letter gets `s-` in front
//!    (`2fa` → `s-2fa`); nothing left at all gives `s`. It is cut to 63
//!    characters, and `-` trimmed at the end again.
//! 3. Mapped names that collide — with a kept name or with each other — all
//!    get `-` and five characters of a hash of their original name (FNV-1a,
//!    base 36), the mapped part cut to 57 characters first
//!    (`payments_api` beside `payments-api` → `payments-api-lp554`). The
//!    suffix depends on the name alone, so it does not change when services
//!    are added, removed or reordered. Should a suffixed name still be taken
//!    (one chance in tens of millions), the hash is taken again over the name
//!    and a counter until it is free, in topology order.
//!
//! The function is pure: the same topology gives the same names everywhere.

use std::collections::{HashMap, HashSet};

use super::Topology;

/// The longest DNS label (RFC 1035 §2.3.4).
pub(crate) const MAX_LABEL: usize = 63;
/// Characters of the collision suffix's hash.
const SUFFIX_CHARS: usize = 5;

/// The DNS name of every service of `t`, indexed like `t.services`: valid
/// RFC 1035 labels, unique across the topology, identical to the service's
/// name when that is already a valid label. See the module docs for the rule.
pub fn dns_names(t: &Topology) -> Vec<String> {
    let names: Vec<&str> = t.services.iter().map(|s| s.name.as_str()).collect();
    labels_for(&names)
}

/// [`dns_names`] over plain names (which must be distinct, as a topology's
/// services are).
pub(crate) fn labels_for(names: &[&str]) -> Vec<String> {
    let mut labels: Vec<String> = names.iter().map(|n| to_label(n)).collect();
    let kept: HashSet<&str> = names.iter().copied().filter(|n| is_label(n)).collect();
    let mut mapped_count: HashMap<&str, usize> = HashMap::new();
    for (name, label) in names.iter().zip(&labels) {
        if !is_label(name) {
            *mapped_count.entry(label.as_str()).or_default() += 1;
        }
    }
    let colliding: Vec<bool> = names
        .iter()
        .zip(&labels)
        .map(|(name, label)| {
            !is_label(name) && (kept.contains(label.as_str()) || mapped_count[label.as_str()] > 1)
        })
        .collect();
    // Names that no suffixed name may take: every label not being suffixed.
    let mut taken: HashSet<String> = labels
        .iter()
        .zip(&colliding)
        .filter(|&(_, &c)| !c)
        .map(|(l, _)| l.clone())
        .collect();
    for (i, name) in names.iter().enumerate() {
        if !colliding[i] {
            continue;
        }
        let base = trim_dashes(cut(&labels[i], MAX_LABEL - 1 - SUFFIX_CHARS));
        let mut salt = 0u32;
        let label = loop {
            let candidate = format!("{base}-{}", suffix(name, salt));
            if !taken.contains(&candidate) {
                break candidate;
            }
            salt += 1;
        };
        taken.insert(label.clone());
        labels[i] = label;
    }
    labels
}

/// Whether `s` is a valid RFC 1035 label (and so also an RFC 1123 one).
pub fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_LABEL
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// One name mapped by steps 1 and 2 of the rule, without the collision
/// suffix: for a name that stands alone (a topology, a namespace default).
pub fn to_label(name: &str) -> String {
    if is_label(name) {
        return name.to_owned();
    }
    let mut out = String::with_capacity(name.len().min(MAX_LABEL) + 2);
    let mut dash = false;
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else {
            dash = true;
        }
        if out.len() > MAX_LABEL {
            break;
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, if out.is_empty() { "s" } else { "s-" });
    }
    trim_dashes(cut(&out, MAX_LABEL)).to_owned()
}

/// The first label of `base`, `base-2`, `base-3`, … that is not in `taken`:
/// names for the exporter's own objects (the load driver) that no service
/// has.
pub fn unused(base: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == base) {
        return base.to_owned();
    }
    (2u32..)
        .map(|i| format!("{base}-{i}"))
        .find(|c| !taken.iter().any(|t| t == c))
        .unwrap_or_default()
}

fn cut(s: &str, max: usize) -> &str {
    // Labels are ASCII, so any byte index is a char boundary.
    &s[..s.len().min(max)]
}

fn trim_dashes(s: &str) -> &str {
    s.trim_matches('-')
}

/// Five base-36 characters of the FNV-1a hash of `name` (and `salt`, when
/// not 0).
fn suffix(name: &str, salt: u32) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let salted = (salt > 0).then(|| salt.to_le_bytes());
    for b in name.bytes().chain(salted.into_iter().flatten()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..SUFFIX_CHARS)
        .map(|_| {
            let d = digits[(h % 36) as usize] as char;
            h /= 36;
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_labels_are_kept_as_they_are() {
        for n in ["web", "db", "a", "api-v2", "a--b", "x1", &"a".repeat(63)] {
            assert!(is_label(n), "{n}");
            assert_eq!(labels_for(&[n]), [n]);
        }
    }

    #[test]
    fn other_names_are_mapped_by_the_rule() {
        let cases = [
            ("Payments_API", "payments-api"),
            ("cart.v2", "cart-v2"),
            ("__edge__", "edge"),
            ("2fa", "s-2fa"),
            ("-", "s"),
            ("", "s"),
            ("café", "caf"),
            ("Über Service", "ber-service"),
            ("db-", "db"),
            ("a  b", "a-b"),
        ];
        for (name, want) in cases {
            assert_eq!(to_label(name), want, "{name:?}");
            assert!(is_label(want));
        }
    }

    #[test]
    fn long_names_are_cut_to_63_without_a_trailing_dash() {
        let long = format!("{}_{}", "a".repeat(62), "b".repeat(10));
        let label = to_label(&long);
        assert_eq!(label, "a".repeat(62));
        let long = "Q".repeat(200);
        assert_eq!(to_label(&long), "q".repeat(63));
    }

    #[test]
    fn collisions_get_a_stable_suffix_and_kept_names_win() {
        let names = ["payments-api", "Payments_API", "payments.api", "web"];
        let labels = labels_for(&names);
        assert_eq!(labels[0], "payments-api");
        assert_eq!(labels[3], "web");
        for l in &labels[1..3] {
            assert!(l.starts_with("payments-api-") && l.len() == 18, "{l}");
            assert!(is_label(l), "{l}");
        }
        assert_ne!(labels[1], labels[2]);
        // The suffix depends on the name alone: reordering and removing
        // services does not move it.
        let again = labels_for(&["web", "payments.api", "Payments_API"]);
        assert_eq!(again[1], labels[2]);
        assert_eq!(again[2], labels[1]);
        // The exact figures (the docs' examples), so a change of hash is a
        // visible change.
        assert_eq!(labels[1], "payments-api-tn9pn");
        assert_eq!(
            labels_for(&["payments-api", "payments_api"])[1],
            "payments-api-lp554"
        );
    }

    #[test]
    fn long_names_that_share_63_characters_stay_apart() {
        let a = format!("{}-alpha", "x".repeat(70));
        let b = format!("{}-beta", "x".repeat(70));
        let labels = labels_for(&[&a, &b]);
        assert_ne!(labels[0], labels[1]);
        for l in &labels {
            assert!(is_label(l) && l.len() == 63, "{l}");
        }
    }

    #[test]
    fn a_suffix_already_taken_is_drawn_again() {
        let taken = format!("db-{}", suffix("DB", 0));
        let labels = labels_for(&[&taken, "DB", "db"]);
        assert_eq!(labels[0], taken);
        assert_eq!(labels[2], "db");
        assert_eq!(labels[1], format!("db-{}", suffix("DB", 1)));
        let unique: HashSet<_> = labels.iter().collect();
        assert_eq!(unique.len(), 3);
    }

    #[test]
    fn unused_skips_names_services_have() {
        let taken = vec!["retrylint-drive".to_owned(), "retrylint-drive-2".to_owned()];
        assert_eq!(unused("retrylint-drive", &taken), "retrylint-drive-3");
        assert_eq!(unused("retrylint-drive", &[]), "retrylint-drive");
    }
}
