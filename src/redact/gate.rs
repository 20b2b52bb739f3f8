//! The anchor gate: which rules have one of their literal anchors in a text (ASCII case
//! ignored, except for anchors written with capitals, which must occur as written). Only those
//! rules' patterns then run.
//!
//! The automaton is Aho–Corasick's (the `aho-corasick` crate builds it), walked here from a
//! table of its own: a text of [`SPLIT_FROM`] bytes or more is cut into [`LANES`] overlapping
//! stretches walked side by side (a shorter one is walked whole), so that the processor follows
//! four independent chains of table reads instead of waiting on one (the crate's overlapping
//! search does one read after another, each waiting for the last: ~2.3 ns a byte, a twentieth
//! of a first build's CPU). Every anchor occurrence starts in some stretch and ends within it
//! (stretches overlap by the longest anchor), and the answer is a set, so the cut changes
//! nothing.
use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};
use rustc_hash::FxHashMap;

/// Stretches walked side by side.
const LANES: usize = 4;
/// Texts shorter than this are walked in one stretch.
const SPLIT_FROM: usize = 128;

/// An anchor that must occur exactly as written (it has capitals), ending in some state.
struct Exact {
    rule: usize,
    bytes: &'static [u8],
}

/// One state: the rules of the case-blind anchors that end on entering it, and its exact
/// anchors (a range of [`Gate::exact`]).
#[derive(Clone, Copy, Default)]
struct State {
    rules: u64,
    exact: (u32, u32),
}

/// The anchors' automaton as a dense table over byte classes.
pub(super) struct Gate {
    /// Byte → class: each byte of an anchor (case folded) has its own; all others share 0.
    classes: [u8; 256],
    /// Classes per state (the row length of `next`).
    stride: usize,
    /// The next state per (state, class), states premultiplied by `stride`: from state `s`
    /// on class `c` to `next[s + c]`.
    next: Vec<u16>,
    start: u16,
    /// States below this (premultiplied) say something when entered: match states come first.
    matching: u16,
    /// Per match state: what entering it says.
    states: Vec<State>,
    exact: Vec<Exact>,
    /// Longest anchor, in bytes.
    longest: usize,
}

impl Gate {
    /// The gate of `anchors`: (rule, literal) pairs; a rule index is below 64.
    pub(super) fn new(anchors: &[(usize, &'static str)]) -> Self {
        let literals: Vec<String> = anchors.iter().map(|a| a.1.to_ascii_lowercase()).collect();
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&literals)
            .expect("anchors are plain literals");
        let (classes, reps) = byte_classes(&literals);
        let stride = reps.len();
        let start = dfa.start_state(Anchored::No).expect("an unanchored search");
        let order = reachable_states(&dfa, start, &reps);
        let index: FxHashMap<StateID, u16> = order
            .iter()
            .enumerate()
            .map(|(i, &sid)| {
                let premultiplied = u16::try_from(i * stride).expect(
                    "the built-in anchors' table has under 65536 entries: widen `next` to add more",
                );
                (sid, premultiplied)
            })
            .collect();
        let next = order
            .iter()
            .flat_map(|&sid| reps.iter().map(move |&rep| (sid, rep)))
            .map(|(sid, rep)| index[&dfa.next_state(Anchored::No, sid, rep)])
            .collect();
        let matching = order.iter().take_while(|&&sid| dfa.is_match(sid)).count();
        let (states, exact) = match_states(&dfa, &order[..matching], anchors);
        Gate {
            classes,
            stride,
            next,
            start: index[&start],
            matching: (matching * stride) as u16,
            states,
            exact,
            longest: literals.iter().map(String::len).max().unwrap_or(0),
        }
    }

    /// The rules (bit set) with an anchor in `text`.
    pub(super) fn rules(&self, text: &[u8]) -> u64 {
        let n = text.len();
        if n < SPLIT_FROM {
            return self.walk_from(self.start, text, 0, n);
        }
        // stretch k starts at k * part and runs `longest - 1` bytes into the next one
        let part = n.div_ceil(LANES);
        let ends: [usize; LANES] =
            std::array::from_fn(|k| ((k + 1) * part + self.longest - 1).min(n));
        let common = (0..LANES).map(|k| ends[k] - k * part).min().unwrap_or(0);
        let lanes: [&[u8]; LANES] = std::array::from_fn(|k| &text[k * part..k * part + common]);
        let mut state = [self.start; LANES];
        let mut want = 0;
        for j in 0..common {
            for k in 0..LANES {
                state[k] = self.step(state[k], lanes[k][j]);
                if state[k] < self.matching {
                    want |= self.enter(state[k], &text[..k * part + j + 1]);
                }
            }
        }
        // the rest of each stretch, one at a time
        for (k, &s) in state.iter().enumerate() {
            want |= self.walk_from(s, text, k * part + common, ends[k]);
        }
        want
    }

    /// Walks `text[from..to]` from `state`: the rules whose anchors end there.
    fn walk_from(&self, mut state: u16, text: &[u8], from: usize, to: usize) -> u64 {
        let mut want = 0;
        for (i, &b) in text[from..to].iter().enumerate() {
            state = self.step(state, b);
            if state < self.matching {
                want |= self.enter(state, &text[..from + i + 1]);
            }
        }
        want
    }

    /// The state after `state` on reading `b`.
    #[inline(always)]
    fn step(&self, state: u16, b: u8) -> u16 {
        self.next[usize::from(state) + usize::from(self.classes[usize::from(b)])]
    }

    /// What entering the match state `state` after reading `read` says: its case-blind rules,
    /// and those of its exact anchors that `read` ends with as written.
    #[inline(always)]
    fn enter(&self, state: u16, read: &[u8]) -> u64 {
        let state = self.states[usize::from(state) / self.stride];
        let mut want = state.rules;
        if state.exact.0 != state.exact.1 {
            want |= self.exact_rules(state.exact, read);
        }
        want
    }

    #[cold]
    fn exact_rules(&self, (from, to): (u32, u32), read: &[u8]) -> u64 {
        self.exact[from as usize..to as usize]
            .iter()
            .filter(|e| read.ends_with(e.bytes))
            .fold(0, |m, e| m | 1 << e.rule)
    }
}

/// The byte classes of the (lowercased) `literals`: per byte its class (0: a byte no anchor
/// holds; a letter and its capital share one), and per class a byte that represents it.
fn byte_classes(literals: &[String]) -> ([u8; 256], Vec<u8>) {
    let mut classes = [0u8; 256];
    let mut reps = vec![0u8];
    for b in literals.iter().flat_map(|l| l.bytes()) {
        if classes[usize::from(b)] == 0 {
            let class = reps.len() as u8;
            reps.push(b);
            classes[usize::from(b)] = class;
            classes[usize::from(b.to_ascii_uppercase())] = class;
        }
    }
    (classes, reps)
}

/// Every state of `dfa` reachable from `start` on the bytes `reps`, breadth first; then the
/// match states moved first (their order otherwise kept).
fn reachable_states(dfa: &DFA, start: StateID, reps: &[u8]) -> Vec<StateID> {
    let mut order = vec![start];
    let mut seen: FxHashMap<StateID, ()> = FxHashMap::default();
    seen.insert(start, ());
    let mut at = 0;
    while let Some(&sid) = order.get(at) {
        at += 1;
        for &rep in reps {
            let to = dfa.next_state(Anchored::No, sid, rep);
            if seen.insert(to, ()).is_none() {
                order.push(to);
            }
        }
    }
    order.sort_by_key(|&sid| !dfa.is_match(sid));
    order
}

/// What entering each of the match states `matching` says: the case-blind anchors' rules as
/// a bit set, and the anchors with capitals, which are checked as written.
fn match_states(
    dfa: &DFA,
    matching: &[StateID],
    anchors: &[(usize, &'static str)],
) -> (Vec<State>, Vec<Exact>) {
    let mut exact = Vec::new();
    let states = matching
        .iter()
        .map(|&sid| {
            let mut state = State {
                exact: (exact.len() as u32, exact.len() as u32),
                ..State::default()
            };
            for k in 0..if dfa.is_match(sid) {
                dfa.match_len(sid)
            } else {
                0
            } {
                let (rule, literal) = anchors[dfa.match_pattern(sid, k).as_usize()];
                if literal.bytes().any(|b| b.is_ascii_uppercase()) {
                    exact.push(Exact {
                        rule,
                        bytes: literal.as_bytes(),
                    });
                } else {
                    state.rules |= 1 << rule;
                }
            }
            state.exact.1 = exact.len() as u32;
            state
        })
        .collect();
    (states, exact)
}

#[cfg(test)]
mod tests;
