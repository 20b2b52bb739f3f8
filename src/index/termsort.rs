//! The dictionary's order: a segment's term ids sorted by the terms' bytes, by radix sort on
//! 8-byte big-endian words of the terms and comparisons only within runs that share them.
use super::intern::Terms;
use crate::util::cmp_bytes;

/// The term ids in the terms' byte order. Sorted by each term's first 8 bytes (big-endian,
/// zero-padded) with a radix sort (no comparisons, so no mispredicted branches: 58 -> 40 ms
/// for a million terms, where the comparison sort was 4 % of a first build's CPU); the runs of
/// terms with the same first 8 bytes (paths, long identifiers) are then sorted by their next
/// 8 bytes, and so on ([`sort_run`]).
pub(super) fn sorted_ids(terms: &Terms) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = (0..terms.len() as u32)
        .map(|id| (word_at(terms.get(id), 0), id))
        .collect();
    radsort::sort_by_key(&mut keyed, |k| k.0);
    for run in keyed.chunk_by_mut(|a, b| a.0 == b.0) {
        if run.len() > 1 {
            sort_run(run, terms, 8);
        }
    }
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// The 8 bytes of `term` from `at` as a big-endian word, zero-padded (so that words compare as
/// the bytes do, a shorter term first among those the padding makes equal). Read by a few
/// loads, some overlapping: a copy of the variable-length rest into a padded array was a
/// `memcpy` call per term (0.8 % of a first build's CPU, in [`sort_run`]).
#[inline]
fn word_at(term: &[u8], at: usize) -> u64 {
    let rest = term.get(at..).unwrap_or_default();
    if let Some(w) = rest.first_chunk::<8>() {
        return u64::from_be_bytes(*w);
    }
    let n = rest.len();
    let be4 = |i: usize| {
        u64::from(u32::from_be_bytes([
            rest[i],
            rest[i + 1],
            rest[i + 2],
            rest[i + 3],
        ]))
    };
    match n {
        // the first four bytes and the last four, placed where they go: the bytes both hold
        // are the same bytes
        4..=7 => be4(0) << 32 | (be4(n - 4) << 32) >> (8 * (n - 4)),
        1..=3 => {
            let b = |i: usize| u64::from(rest[i]) << (56 - 8 * i);
            b(0) | b(n / 2) | b(n - 1)
        }
        _ => 0,
    }
}

/// Sorts `run`, terms whose first `at` bytes are the same (zero-padded), by their bytes: by
/// the word at `at` (each term read once, then keys compared in place: comparing whole terms
/// read two terms from all over memory at every step, 1.7 % of a first build's CPU), then the
/// runs that share it by the next word. Terms that end inside the padding (`a` and `a\0`) or
/// run past 64 bytes are compared whole.
fn sort_run(run: &mut [(u64, u32)], terms: &Terms, at: usize) {
    let mut longer = false;
    if at < 64 {
        for e in run.iter_mut() {
            let t = terms.get(e.1);
            longer |= t.len() > at;
            e.0 = word_at(t, at);
        }
    }
    if !longer {
        run.sort_unstable_by(|a, b| cmp_bytes(terms.get(a.1), terms.get(b.1)));
        return;
    }
    run.sort_unstable_by_key(|e| e.0);
    for sub in run.chunk_by_mut(|a, b| a.0 == b.0) {
        if sub.len() > 1 {
            sort_run(sub, terms, at + 8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::intern::{self, Interner};
    use proptest::collection;
    use proptest::prelude::*;

    #[test]
    fn word_at_is_the_padded_big_endian_word_at_every_length_and_offset() {
        let bytes: Vec<u8> = (1..=24u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for len in 0..=bytes.len() {
            let term = &bytes[..len];
            for at in 0..=len + 2 {
                let mut w = [0u8; 8];
                for (i, b) in term.iter().skip(at).take(8).enumerate() {
                    w[i] = *b;
                }
                assert_eq!(
                    word_at(term, at),
                    u64::from_be_bytes(w),
                    "len {len} at {at}"
                );
            }
        }
    }

    proptest! {
        /// Terms sharing their first 8 bytes (or up to 72: every word of the run sort), short
        /// ones (zero-padded words) and bytes of every value come out in byte order.
        #[test]
        fn sorted_ids_put_terms_in_byte_order(
            words in collection::vec(
                collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(0xff), any::<u8>()], 0..12),
                0..300,
            ),
            prefix in collection::vec(b'a'..=b'c', 0..72),
        ) {
            let mut interner = Interner::default();
            for w in &words {
                let mut t = prefix.clone();
                t.extend_from_slice(w);
                interner.entry_hashed(&t, intern::hash(&t), 0);
            }
            let terms = interner.into_terms();
            let order = sorted_ids(&terms);
            let mut want: Vec<u32> = (0..terms.len() as u32).collect();
            want.sort_by(|&a, &b| terms.get(a).cmp(terms.get(b)));
            prop_assert_eq!(order, want);
        }
    }
}
