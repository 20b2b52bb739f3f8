//! The replacements against byte-at-a-time references: every length up to past the `rep movsb`
//! threshold, at every alignment, and every overlap a move can have.
use super::{SMALL, bcmp, memcmp, memcpy, memmove};
use proptest::prelude::*;

/// Bytes that differ from their neighbours, so that a byte copied to the wrong place shows.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 131 + 7) as u8).collect()
}

#[test]
fn copies_copy_exactly_every_length_and_alignment() {
    let src = pattern(2 * SMALL + 80);
    for n in 0..=2 * SMALL + 40 {
        for (from, to) in [(0, 0), (1, 3), (7, 0), (5, 13), (15, 1), (32, 17)] {
            let mut dst = vec![0xEEu8; n + 64];
            // SAFETY: `from + n` and `to + n` are within `src` and `dst`.
            let r = unsafe { memcpy(dst.as_mut_ptr().add(to), src.as_ptr().add(from), n) };
            assert_eq!(r, dst[to..].as_mut_ptr(), "returns the destination");
            assert_eq!(
                &dst[to..to + n],
                &src[from..from + n],
                "{n} bytes {from}->{to}"
            );
            assert!(dst[..to].iter().all(|&b| b == 0xEE), "{n}: wrote before");
            assert!(
                dst[to + n..].iter().all(|&b| b == 0xEE),
                "{n}: wrote past the end"
            );
        }
    }
}

#[test]
fn moves_are_right_for_every_overlap() {
    let base = pattern(3 * SMALL);
    for n in (0..=SMALL + 20).chain([2 * SMALL - 1, 2 * SMALL + 7]) {
        for shift in -(n as isize) - 2..=n as isize + 2 {
            let (from, to) = if shift < 0 {
                ((-shift) as usize, 0)
            } else {
                (0, shift as usize)
            };
            if from + n > base.len() || to + n > base.len() {
                continue;
            }
            let mut want = base.clone();
            want.copy_within(from..from + n, to);
            let mut got = base.clone();
            let p = got.as_mut_ptr();
            // SAFETY: both ranges lie within `got`.
            unsafe { memmove(p.add(to), p.add(from), n) };
            assert_eq!(got, want, "{n} bytes {from}->{to}");
        }
    }
}

#[test]
fn a_long_backward_move_leaves_the_direction_flag_clear() {
    let mut got = pattern(1000);
    let mut want = got.clone();
    want.copy_within(0..900, 50);
    let p = got.as_mut_ptr();
    // SAFETY: both ranges lie within `got`.
    unsafe { memmove(p.add(50), p, 900) };
    assert_eq!(got, want);
    // a forward string copy after it would run backwards if the flag were left set
    let src = pattern(300);
    let mut dst = vec![0u8; 300];
    // SAFETY: 300 bytes each.
    unsafe { memcpy(dst.as_mut_ptr(), src.as_ptr(), 300) };
    assert_eq!(dst, src);
}

fn sign(x: i32) -> i32 {
    x.signum()
}

proptest! {
    #[test]
    fn comparisons_order_as_slices_do(
        a in proptest::collection::vec(0u8..3, 0..40),
        b in proptest::collection::vec(prop_oneof![0u8..3, 250u8..=255], 0..40),
        shared in 0usize..30,
    ) {
        // a shared prefix of random length makes the first difference fall anywhere
        let prefix = pattern(shared);
        let (a, b) = ([&prefix[..], &a].concat(), [&prefix[..], &b].concat());
        let n = a.len().min(b.len());
        let want = a[..n].cmp(&b[..n]) as i32;
        // SAFETY: both are at least `n` long.
        let (got, eq) = unsafe { (memcmp(a.as_ptr(), b.as_ptr(), n), bcmp(a.as_ptr(), b.as_ptr(), n)) };
        prop_assert_eq!(sign(got), want);
        prop_assert_eq!(eq == 0, a[..n] == b[..n]);
        // SAFETY: as above.
        prop_assert_eq!(unsafe { memcmp(a.as_ptr(), a.as_ptr(), a.len()) }, 0);
    }
}

#[test]
fn every_byte_position_and_value_decides_a_comparison() {
    for n in 1..=40 {
        for at in 0..n {
            for (x, y) in [(0u8, 1u8), (1, 0), (0x7f, 0x80), (0xff, 0)] {
                let mut a = pattern(n);
                let mut b = a.clone();
                a[at] = x;
                b[at] = y;
                let want = x.cmp(&y) as i32;
                // SAFETY: both are `n` long.
                let got = unsafe { memcmp(a.as_ptr(), b.as_ptr(), n) };
                assert_eq!(sign(got), want, "{n} bytes, differing at {at}: {x} vs {y}");
            }
        }
    }
}
