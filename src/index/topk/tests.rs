//! Unit tests of top-k selection: block-max pruning returns exactly what scoring every match would.
use super::*;
use crate::index::SegmentBuilder;
use crate::index::query::parse;
use crate::index::schema::{DocText, NewDoc};
use crate::index::scoring::by_score;
use crate::index::tokenizer::{Tokenizer, TokenizerConfig};
use std::sync::Arc;

/// A deterministic corpus: words drawn with a skewed distribution, lengths varying.
fn corpus(seed: u64, docs: usize) -> Vec<String> {
    let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as usize
    };
    (0..docs)
        .map(|_| {
            let len = 3 + next() % 60;
            (0..len)
                .map(|_| {
                    let r = next() % 1000;
                    // skew: low word numbers are common
                    words[(r * r / 1000 * r / 1000) % words.len()].clone()
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn view(texts: &[String], per_segment: usize) -> IndexView {
    view_of(texts, per_segment, |_, t| doc(t, None, None, 0))
}

/// The document made of `text` in `field` (0 user, 1 assistant), with its time and copy key.
fn doc(text: &str, timestamp: Option<i64>, dup_key: Option<u64>, field: usize) -> NewDoc<'_> {
    let mut fields = ["", "", "", ""];
    fields[field] = text;
    NewDoc {
        conv: 0,
        turn: 0,
        timestamp,
        dup_key,
        fields,
    }
}

/// An index of `texts`, `per_segment` documents per segment, document `n` made by `make` (its
/// conversation is `n`).
fn view_of<'a>(
    texts: &'a [String],
    per_segment: usize,
    make: impl Fn(usize, &'a str) -> NewDoc<'a>,
) -> IndexView {
    let mut segs = Vec::new();
    for (s, chunk) in texts.chunks(per_segment).enumerate() {
        let mut b = SegmentBuilder::new();
        for (i, t) in chunk.iter().enumerate() {
            let n = s * per_segment + i;
            b.add(&NewDoc {
                conv: n as u32,
                ..make(n, t)
            });
        }
        segs.push(Arc::new(b.finish(s as u64 + 1)));
    }
    IndexView::from_segments(segs)
}

fn run(
    view: &IndexView,
    scan: &[usize],
    q: &str,
    k: usize,
    pruning: Pruning,
    shared: Option<&AtomicU32>,
) -> Vec<(u32, i64)> {
    let plan = parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()));
    let key = |h: &Hit| view.segs[h.seg].seg.doc(h.doc).conv;
    let rank = |a: &Hit, b: &Hit| by_score(a, b, |a, b| key(a).cmp(&key(b)));
    let req = EvalRequest {
        view,
        scan,
        plan: &plan,
        params: &Bm25::default(),
        k,
        rank,
        lead: Lead::Score,
        pruning,
        shared,
        ordered: &|_, _| false,
    };
    let e = evaluate(&req, |_, _, _, _| true, |_, _| true);
    if !e.exact {
        PRUNED.with(|p| p.set(p.get() + 1));
    }
    e.hits.iter().map(|h| (key(h), h.rounded)).collect()
}

/// Whether `text`, as a prompt, passes the phrases of `plan` (the brute-force check).
fn in_prompt(plan: &crate::index::query::Plan, text: &str, scratch: &mut String) -> bool {
    let doc = DocText {
        user: text,
        assistant: "",
        tools: "",
        context: "",
    };
    plan.phrases_ok(&doc, scratch)
}

thread_local! {
    static PRUNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[test]
fn pruning_never_changes_the_results() {
    let texts = corpus(7, 20_000);
    let v = view(&texts, 6000);
    assert!(v.segs.iter().any(|s| s.seg.doc_count() >= PRUNE_MIN_DOCS));
    let all: Vec<usize> = (0..v.segs.len()).collect();
    for q in [
        "w0",
        "w1 w2",
        "w0 w1 w2 w3",
        "w150 w0",
        "w3 w390 w7 w0",
        "w5 w5 w6",
        "w399",
        "w1*",
        "w0 w2*",
    ] {
        for k in [1, 10, 57] {
            let exact = run(&v, &all, q, k, Pruning::Off, None);
            let pruned = run(&v, &all, q, k, Pruning::ByScore, None);
            assert_eq!(pruned, exact, "query {q:?} k {k}");
            // two halves sharing their threshold, merged, give the same best k
            let [a, b] = halves(&v);
            let shared = AtomicU32::new(0);
            let mut merged = run(&v, &a, q, k, Pruning::ByScore, Some(&shared));
            merged.extend(run(&v, &b, q, k, Pruning::ByScore, Some(&shared)));
            merged.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            merged.truncate(k);
            assert_eq!(merged, exact, "halves, query {q:?} k {k}");
        }
    }
    assert!(
        PRUNED.with(|p| p.get()) > 10,
        "the test must exercise pruning"
    );
}

#[test]
fn deferred_phrase_checks_give_what_checking_every_match_gives() {
    let texts = corpus(11, 8000);
    let v = view(&texts, 3000);
    assert!(
        v.live_docs >= PRUNE_MIN_DOCS as u64,
        "phrase checks are deferred"
    );
    let all: Vec<usize> = (0..v.segs.len()).collect();
    // (phrase query, the same terms as plain keywords: equal scores, no phrase check)
    for (q, plain) in [
        (r#""w0 w1""#, "w0 w1"),
        (r#"w2 "w0 w1""#, "w2 w0 w1"),
        (r#"w0 -"w1 w2""#, "w0"),
        (r#""w1 w0" "w0 w2""#, "w1 w0 w0 w2"),
    ] {
        let phrase_plan = parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()));
        let mut scratch = String::new();
        let want: Vec<(u32, i64)> = run(&v, &all, plain, texts.len(), Pruning::Off, None)
            .into_iter()
            .filter(|(conv, _)| in_prompt(&phrase_plan, &texts[*conv as usize], &mut scratch))
            .collect();
        for k in [1, 10, 57] {
            let expected: Vec<(u32, i64)> = want.iter().take(k).copied().collect();
            for pruning in [Pruning::ByScore, Pruning::Off] {
                let got = run(&v, &all, q, k, pruning, None);
                assert_eq!(got, expected, "query {q:?} k {k} {pruning:?}");
            }
        }
    }
}

#[test]
fn a_phrase_is_found_where_its_words_are_not_all_terms() {
    // segments of 2,000: (1) the phrase only where `rr` is not a term (a combining mark splits
    // the word, `ke\u{301}rr` is indexed as `kerr`); (2) plain `rr w9` and `rr` apart from
    // `w9`; (3) `rr` apart only; (4) no `rr` at all
    let mut texts = corpus(17, 8000);
    for (i, t) in texts.iter_mut().enumerate().filter(|(i, _)| i % 25 == 0) {
        let extra = match (i / 2000, i % 2) {
            (0, 0) => " ke\u{301}rr w9",
            (0, _) => " x\u{300}rr w9",
            (1, 0) => " rr w9",
            (1, _) | (2, _) => " rr w3 w9",
            _ => " w9",
        };
        t.push_str(extra);
    }
    let v = view(&texts, 2000);
    let odd = |s: usize| v.segs[s].seg.odd_words().any();
    assert!(odd(0) && !odd(1) && !odd(2) && !odd(3));
    assert!(v.segs[0].seg.term_id("rr").is_none() && v.segs[3].seg.term_id("rr").is_none());
    let all: Vec<usize> = (0..v.segs.len()).collect();
    let plan = parse(
        r#""rr w9""#,
        &mut Tokenizer::with_config(TokenizerConfig::default()),
    );
    assert_eq!(plan.needed, ["rr", "w9"]);
    let mut scratch = String::new();
    let want: Vec<u32> = (0..texts.len() as u32)
        .filter(|&n| in_prompt(&plan, &texts[n as usize], &mut scratch))
        .collect();
    assert_eq!(want.len(), 80 + 40, "the phrase in the first two segments");
    for q in [r#""rr w9""#, r#"w9 "rr w9""#, r#""RR W9" w1"#] {
        for pruning in [Pruning::ByScore, Pruning::Off] {
            let mut got: Vec<u32> = run(&v, &all, q, texts.len(), pruning, None)
                .into_iter()
                .map(|(conv, _)| conv)
                .collect();
            got.sort_unstable();
            assert_eq!(got, want, "query {q:?} {pruning:?}");
        }
    }
}

#[test]
fn recent_order_with_phrases_gives_the_newest_matches_in_a_stable_order() {
    let texts = corpus(13, 6000);
    // timestamps with many ties, unrelated to the document order
    let stamp = |i: usize| ((i * 7919) % 150) as i64;
    let v = view_of(&texts, 2500, |n, t| doc(t, Some(stamp(n)), None, 1));
    let all: Vec<usize> = (0..v.segs.len()).collect();
    let key = |h: &Hit| {
        let m = v.segs[h.seg].seg.doc(h.doc);
        (std::cmp::Reverse(m.timestamp), m.conv)
    };
    let rank = |a: &Hit, b: &Hit| key(a).cmp(&key(b));
    for q in [
        r#""w0 w1""#,
        r#""w1 w0" w3"#,
        r#"w2 -"w0 w0""#,
        r#""w0 w0" w5"#,
    ] {
        let plan = parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()));
        let mut scratch = String::new();
        // brute force: every document holding a term of each clause and passing the phrases
        let terms: Vec<&str> = plan.terms.iter().map(|t| t.text.as_str()).collect();
        let mut want: Vec<(std::cmp::Reverse<i64>, u32)> = (0..texts.len())
            .filter(|&n| texts[n].split(' ').any(|w| terms.contains(&w)))
            .filter(|&n| {
                let text = DocText {
                    user: "",
                    assistant: &texts[n],
                    tools: "",
                    context: "",
                };
                plan.phrases_ok(&text, &mut scratch)
            })
            .map(|n| (std::cmp::Reverse(stamp(n)), n as u32))
            .collect();
        want.sort();
        assert!(
            want.len() > 20,
            "query {q:?} matches enough to cut: {}",
            want.len()
        );
        for k in (1..80).chain([100, 300, texts.len()]) {
            let req = EvalRequest {
                view: &v,
                scan: &all,
                plan: &plan,
                params: &Bm25::default(),
                k,
                rank,
                lead: Lead::Newest,
                pruning: Pruning::Off,
                shared: None,
                ordered: &|_, _| false,
            };
            let e = evaluate(&req, |_, _, _, _| true, |_, _| true);
            let got: Vec<_> = e.hits.iter().map(key).collect();
            assert_eq!(got, want[..k.min(want.len())], "query {q:?} k {k}");
            assert!(e.total >= got.len() && e.total <= want.len());
            if e.exact {
                assert_eq!(e.total, want.len(), "query {q:?} k {k}");
            }
        }
    }
}

#[test]
fn phrase_checks_in_rounds_accept_copies_in_rank_order() {
    // enough documents for several rounds; every ninth document is a copy of another (same
    // duplicate key) and only the first accepted copy counts, as the corpus collapses them
    let texts = corpus(17, 9000);
    let dup = |n: usize| (n % 9 == 0).then_some((n % 40) as u64 + 1);
    let v = view_of(&texts, 3000, |n, t| {
        doc(t, Some(((n * 7919) % 300) as i64), dup(n), 0)
    });
    let all: Vec<usize> = (0..v.segs.len()).collect();
    let conv = |h: &Hit| v.segs[h.seg].seg.doc(h.doc).conv;
    let stamp = |h: &Hit| v.segs[h.seg].seg.doc(h.doc).timestamp;
    let by_relevance = |a: &Hit, b: &Hit| by_score(a, b, |a, b| conv(a).cmp(&conv(b)));
    let by_recency = |a: &Hit, b: &Hit| stamp(b).cmp(&stamp(a)).then(conv(a).cmp(&conv(b)));
    let passes = |n: u32| n % 7 != 3;
    let ordered = |seg: &Segment, d: u32| seg.doc(d).dup_key != 0;
    for (q, plain) in [
        (r#""w0 w1""#, "w0 w1"),
        (r#""w1 w0" w2"#, "w1 w0 w2"),
        (r#""w0 w0""#, "w0 w0"),
    ] {
        let plan = parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()));
        let plain = parse(
            plain,
            &mut Tokenizer::with_config(TokenizerConfig::default()),
        );
        for (lead, pruning) in [
            (Lead::Score, Pruning::ByScore),
            (Lead::Score, Pruning::Off),
            (Lead::Newest, Pruning::Off),
        ] {
            let rank = |a: &Hit, b: &Hit| match lead {
                Lead::Score => by_relevance(a, b),
                Lead::Newest => by_recency(a, b),
            };
            // brute force: every match of the plain terms, in rank order, phrases checked,
            // filtered, copies after the first accepted dropped
            let every = EvalRequest {
                view: &v,
                scan: &all,
                plan: &plain,
                params: &Bm25::default(),
                k: texts.len(),
                rank,
                lead,
                pruning: Pruning::Off,
                shared: None,
                ordered: &|_, _| false,
            };
            let mut scratch = String::new();
            let mut seen = std::collections::HashSet::new();
            let want: Vec<(u32, i64)> = evaluate(&every, |_, _, _, _| true, |_, _| false)
                .hits
                .iter()
                .filter(|h| plan.phrases_ok(&v.segs[h.seg].seg.text(h.doc), &mut scratch))
                .filter(|h| passes(conv(h)))
                .filter(|h| {
                    let key = v.segs[h.seg].seg.doc(h.doc).dup_key;
                    key == 0 || seen.insert(key)
                })
                .map(|h| (conv(h), h.rounded))
                .collect();
            assert!(want.len() > 100, "query {q:?} matches: {}", want.len());
            for k in [1, 3, 10, 57, 400] {
                let req = EvalRequest {
                    view: &v,
                    scan: &all,
                    plan: &plan,
                    params: &Bm25::default(),
                    k,
                    rank,
                    lead,
                    pruning,
                    shared: None,
                    ordered: &ordered,
                };
                let mut seen = std::collections::HashSet::new();
                let accept = |_: usize, _: u32, m: &DocMeta, _: u8| {
                    passes(m.conv) && (m.dup_key == 0 || seen.insert(m.dup_key))
                };
                let e = evaluate(&req, accept, |_, _| false);
                let got: Vec<(u32, i64)> = e.hits.iter().map(|h| (conv(h), h.rounded)).collect();
                let expected = &want[..k.min(want.len())];
                assert_eq!(got, expected, "query {q:?} k {k} {lead:?} {pruning:?}");
                assert!(e.total >= got.len() && e.total <= want.len());
            }
        }
    }
}

/// A hit in full: segment, document, score bits, groups, fields.
type FullHit = (usize, u32, u32, u64, u8);

/// Every hit of `q` in full and the count.
fn full_run(view: &IndexView, q: &str, k: usize, pruning: Pruning) -> (Vec<FullHit>, usize) {
    let plan = parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()));
    let key = |h: &Hit| view.segs[h.seg].seg.doc(h.doc).conv;
    let rank = |a: &Hit, b: &Hit| by_score(a, b, |a, b| key(a).cmp(&key(b)));
    let all: Vec<usize> = (0..view.segs.len()).collect();
    let req = EvalRequest {
        view,
        scan: &all,
        plan: &plan,
        params: &Bm25::default(),
        k,
        rank,
        lead: Lead::Score,
        pruning,
        shared: None,
        ordered: &|_, _| false,
    };
    let e = evaluate(&req, |_, _, _, _| true, |_, _| true);
    let hits = e
        .hits
        .iter()
        .map(|h| (h.seg, h.doc, h.score.to_bits(), h.groups, h.fields))
        .collect();
    (hits, e.total)
}

#[test]
fn the_heap_of_many_lists_scores_exactly_as_looking_at_every_list() {
    use crate::index::maxscore::TEST_HEAP_FROM;
    let texts = corpus(23, 12_000);
    let v = view(&texts, 5000);
    let many = (1..=12)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    for q in ["w1*", "w0 w2*", "w3* -w5", many.as_str(), "w1 w2"] {
        for k in [1, 10, 200] {
            for pruning in [Pruning::Off, Pruning::ByScore] {
                TEST_HEAP_FROM.with(|c| c.set(usize::MAX));
                let linear = full_run(&v, q, k, pruning);
                TEST_HEAP_FROM.with(|c| c.set(2));
                let heap = full_run(&v, q, k, pruning);
                TEST_HEAP_FROM.with(|c| c.set(8));
                let default = full_run(&v, q, k, pruning);
                assert!(!linear.0.is_empty(), "{q:?}: nothing to compare");
                assert_eq!(heap, linear, "{q:?} k {k} {pruning:?}");
                assert_eq!(default, linear, "{q:?} k {k} {pruning:?}");
            }
        }
    }
}
