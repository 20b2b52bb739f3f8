//! Word forms: a natural-language query word also meets the other forms of it the index holds
//! (`pets` meets `pet`, `explored` meets `explore`), found by their English Snowball stem, at a
//! lower weight than the word as typed, so an exact form still ranks first. Only plain words
//! are stemmed: letters only, lowercase after at most a first capital (see
//! [`super::query::is_natural_word`]); identifiers, paths, flags, numbers and code never are,
//! on either side.
//!
//! The index holds no stems (the cache format does not change): the forms are the dictionary
//! terms whose stem equals the query word's, looked for in each segment's sorted dictionary
//! among the terms starting like the stem, and remembered per segment
//! ([`super::segment::FormCache`]).
use super::query::{Plan, PlanTerm};
use super::segment::Segment;
use super::view::IndexView;
use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;

/// How much longer than its stem a form may be (`explor` → `explorations`).
const MAX_SUFFIX: usize = 7;
/// Stems remembered per segment before the memory is cleared.
const CACHE_STEMS: usize = 4096;

/// The English Snowball stem of a lowercase word.
pub(crate) fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER
        .get_or_init(|| Stemmer::create(Algorithm::English))
        .stem(word)
        .into_owned()
}

/// Whether a dictionary term may be a form of a natural word: lowercase ASCII letters only.
fn is_plain(term: &[u8]) -> bool {
    !term.is_empty() && term.iter().all(u8::is_ascii_lowercase)
}

/// The terms of `seg` (ids) whose stem is `stem`: plain words starting with the stem (or with
/// it less a final `i`, which Snowball writes for a `y`: `happi` ← `happy`), at most
/// [`MAX_SUFFIX`] bytes longer.
fn segment_forms(seg: &Segment, stem: &str) -> Box<[u32]> {
    if let Some(ids) = seg.forms.0.lock().ok().and_then(|m| m.get(stem).cloned()) {
        return ids;
    }
    let prefix = stem.strip_suffix('i').unwrap_or(stem);
    let mut ids = Vec::new();
    for id in seg.prefix_range(prefix) {
        let t = seg.term(id as usize);
        if t.len() > stem.len() + MAX_SUFFIX || !is_plain(t) {
            continue;
        }
        // plain ASCII: valid UTF-8
        let t = std::str::from_utf8(t).unwrap_or_default();
        if self::stem(t) == stem {
            ids.push(id);
        }
    }
    let ids: Box<[u32]> = ids.into();
    if let Ok(mut m) = seg.forms.0.lock() {
        if m.len() >= CACHE_STEMS {
            m.clear();
        }
        m.insert(stem.into(), ids.clone());
    }
    ids
}

/// Adds to `plan`, for each of its natural words ([`Plan::words`]), the other forms of the word
/// that `view` holds, as terms of the word's clause weighed `weight` times the word's own
/// weight. A form that is already a term of the plan is not added again (`pet pets` counts
/// `pet` once). `weight` 0 adds nothing.
pub(crate) fn add_forms(plan: &mut Plan, view: &IndexView, weight: f32) {
    if weight <= 0.0 {
        return;
    }
    let words = std::mem::take(&mut plan.words);
    for (term, group) in &words {
        let Some(own) = plan
            .terms
            .iter()
            .find(|t| &t.text == term && t.group == *group)
            .map(|t| t.weight)
        else {
            continue;
        };
        let s = stem(term);
        let mut forms: Vec<String> = Vec::new();
        for sv in &view.segs {
            for &id in segment_forms(&sv.seg, &s).iter() {
                if sv.df(id) == 0 {
                    continue;
                }
                let t = String::from_utf8_lossy(sv.seg.term(id as usize)).into_owned();
                if !forms.contains(&t) {
                    forms.push(t);
                }
            }
        }
        // the same terms in the same order however the index is cut into segments
        forms.sort_unstable();
        for f in forms {
            if plan.terms.iter().any(|t| t.text == f) {
                continue;
            }
            plan.terms.push(PlanTerm {
                text: f,
                group: *group,
                weight: own * weight,
                whole: false,
            });
        }
    }
    plan.words = words;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::query::is_natural_word;
    use proptest::prelude::*;

    #[test]
    fn plain_words_are_natural_and_code_is_not() {
        for w in [
            "pets",
            "Pets",
            "pets?",
            "\"pets\",",
            "Nate's",
            "explored.",
            "watch",
        ] {
            assert!(is_natural_word(w), "{w:?}");
        }
        for w in [
            "pe",
            "pets2",
            "v2",
            "my_pets",
            "src/pets",
            "pets.rs",
            "--pets",
            "-pets",
            "myPets",
            "PETS",
            "e0502",
            "1234",
            "pet-shop",
            "foo(bar)",
            "Vec<String>",
            "a.b",
        ] {
            assert!(!is_natural_word(w), "{w:?}");
        }
    }

    #[test]
    fn stems_meet_word_forms() {
        assert_eq!(stem("pets"), stem("pet"));
        assert_eq!(stem("started"), stem("start"));
        assert_eq!(stem("explored"), stem("explore"));
        assert_eq!(stem("watched"), stem("watch"));
    }

    proptest! {
        /// Whatever surrounds letters, a keyword holding a digit, `_`, `/`, `.`, `-` inside it,
        /// or a capital after its first letter is never stemmed.
        #[test]
        fn code_is_never_stemmed(
            a in "[a-z]{1,8}",
            b in "[a-z]{1,8}",
            sep in prop::sample::select(vec!["_", "/", ".", "-", "0", "7", "::", "\\"]),
            camel in "[A-Z]",
        ) {
            let joined = format!("{a}{sep}{b}");
            prop_assert!(!is_natural_word(&joined), "{}", joined);
            let humped = format!("{a}{camel}{b}");
            prop_assert!(!is_natural_word(&humped), "{}", humped);
            let flag = format!("--{a}{b}");
            prop_assert!(!is_natural_word(&flag), "{}", flag);
            let number = format!("{a}{}", b.len());
            prop_assert!(!is_natural_word(&number), "{}", number);
        }
    }
}
