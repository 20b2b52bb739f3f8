//! The gate against the plain reading of its contract: the `aho-corasick` crate's overlapping
//! search over the same anchors (case ignored), each match kept when its anchor has no capitals
//! or occurs as written.
use super::super::rules::RULES;
use super::{Gate, LANES, SPLIT_FROM};
use aho_corasick::AhoCorasick;
use proptest::prelude::*;

fn anchors() -> Vec<(usize, &'static str)> {
    RULES
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.anchors.iter().map(move |&a| (i, a)))
        .collect()
}

fn reference(anchors: &[(usize, &'static str)], text: &[u8]) -> u64 {
    let ac = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(anchors.iter().map(|a| a.1))
        .expect("literals");
    let mut want = 0;
    for m in ac.find_overlapping_iter(text) {
        let (rule, a) = anchors[m.pattern().as_usize()];
        if !a.bytes().any(|b| b.is_ascii_uppercase()) || text[m.range()] == *a.as_bytes() {
            want |= 1 << rule;
        }
    }
    want
}

/// Text made of pieces of anchors (in any case), filler and odd bytes.
fn text() -> impl Strategy<Value = Vec<u8>> {
    let all = anchors();
    let n = all.len();
    let piece = prop_oneof![
        (0..n, any::<u64>()).prop_map(move |(i, case)| {
            let a = all[i].1.as_bytes();
            a.iter()
                .enumerate()
                .map(|(k, &b)| {
                    if case >> (k % 64) & 1 == 1 {
                        b.to_ascii_uppercase()
                    } else {
                        b.to_ascii_lowercase()
                    }
                })
                .collect::<Vec<u8>>()
        }),
        (0..n, 1usize..4).prop_map({
            let all = anchors();
            move |(i, cut)| {
                all[i].1.as_bytes()[..all[i].1.len().saturating_sub(cut).max(1)].to_vec()
            }
        }),
        "[a-z _./:-]{1,12}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 1..6),
    ];
    proptest::collection::vec(piece, 0..120).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Long texts (cut into stretches) and short ones (walked whole) agree with the reference.
    #[test]
    fn the_gate_finds_exactly_the_rules_whose_anchors_occur(text in text()) {
        let anchors = anchors();
        let gate = Gate::new(&anchors);
        prop_assert_eq!(gate.rules(&text), reference(&anchors, &text));
        // every suffix too: stretch edges fall at every place
        for from in (0..text.len()).step_by(7) {
            prop_assert_eq!(gate.rules(&text[from..]), reference(&anchors, &text[from..]));
        }
    }
}

#[test]
fn an_anchor_across_every_stretch_edge_is_found() {
    let anchors = anchors();
    let gate = Gate::new(&anchors);
    let n = 4 * SPLIT_FROM;
    for (rule, a) in anchors.iter().copied() {
        for at in (0..n - a.len())
            .step_by(13)
            .chain((1..LANES).map(|k| k * n / LANES - 1))
        {
            let mut text = vec![b' '; n];
            text[at..at + a.len()].copy_from_slice(a.as_bytes());
            assert_ne!(gate.rules(&text) & 1 << rule, 0, "{a:?} at {at}");
            assert_eq!(
                gate.rules(&text),
                reference(&anchors, &text),
                "{a:?} at {at}"
            );
        }
    }
}

#[test]
fn exact_anchors_need_their_capitals() {
    let anchors = anchors();
    let gate = Gate::new(&anchors);
    let (rule, _) = *anchors
        .iter()
        .find(|a| a.1 == "AKIA")
        .expect("the AWS key anchor");
    assert_ne!(gate.rules(b"id AKIA1234") & 1 << rule, 0);
    assert_eq!(reference(&anchors, b"id akia1234") & 1 << rule, 0);
    assert_eq!(gate.rules(b"id akia1234") & 1 << rule, 0);
    assert_eq!(gate.rules(b""), 0);
}
