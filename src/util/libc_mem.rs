//! The C library's `memcpy`, `memmove`, `memcmp` and `bcmp` for the static x86-64 musl binary
//! (the one users install), where they replace musl's: its `memcpy` runs a `rep movsq` for any
//! copy of 8 bytes or more (tens of cycles of start-up, whatever the size) between byte loops,
//! and its `memcmp` is a byte loop. Most copies and comparisons of an index build are short
//! (terms, keys, a line's strings): with musl's they took 8.9 % of a first build's CPU.
//!
//! Copies of up to 128 bytes load everything into registers, then store it (so they are
//! correct however source and destination overlap); longer ones use `rep movsb` (fast on every
//! x86-64 made since 2012 that has ERMSB, and no slower than musl's elsewhere). Nothing here is
//! a loop that the compiler could turn back into a call to `memcpy`. Other targets keep their C
//! library's functions; these are compiled on every x86-64 target so that they are tested
//! everywhere, and given the C names only on musl.
#![allow(unsafe_code)]
// off musl the C names are not given, and only the tests call these
#![cfg_attr(not(target_env = "musl"), allow(dead_code))]

use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};

/// `n` bytes from `src` to `dst`, for `n` up to 128: all loads first, then all stores, so the
/// ranges may overlap. Each size class copies its first and last blocks, which overlap.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n <= 128` bytes.
#[inline(always)]
unsafe fn copy_small(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY (all blocks): every offset read or written is below `n`.
    unsafe {
        let v = |at: usize| _mm_loadu_si128(src.add(at).cast::<__m128i>());
        let put = |at: usize, x: __m128i| _mm_storeu_si128(dst.add(at).cast::<__m128i>(), x);
        match n {
            65.. => {
                let (a, b, c, d) = (v(0), v(16), v(32), v(48));
                let (e, f, g, h) = (v(n - 64), v(n - 48), v(n - 32), v(n - 16));
                put(0, a);
                put(16, b);
                put(32, c);
                put(48, d);
                put(n - 64, e);
                put(n - 48, f);
                put(n - 32, g);
                put(n - 16, h);
            }
            33..=64 => {
                let (a, b, c, d) = (v(0), v(16), v(n - 32), v(n - 16));
                put(0, a);
                put(16, b);
                put(n - 32, c);
                put(n - 16, d);
            }
            17..=32 => {
                let (a, b) = (v(0), v(n - 16));
                put(0, a);
                put(n - 16, b);
            }
            8..=16 => {
                let a = src.cast::<u64>().read_unaligned();
                let b = src.add(n - 8).cast::<u64>().read_unaligned();
                dst.cast::<u64>().write_unaligned(a);
                dst.add(n - 8).cast::<u64>().write_unaligned(b);
            }
            4..=7 => {
                let a = src.cast::<u32>().read_unaligned();
                let b = src.add(n - 4).cast::<u32>().read_unaligned();
                dst.cast::<u32>().write_unaligned(a);
                dst.add(n - 4).cast::<u32>().write_unaligned(b);
            }
            1..=3 => {
                let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
                *dst = a;
                *dst.add(n / 2) = b;
                *dst.add(n - 1) = c;
            }
            0 => {}
        }
    }
}

/// Longest copy done by [`copy_small`].
const SMALL: usize = 128;

/// `n` bytes from `src` to `dst`, first byte first (correct when `dst` is not inside
/// `src + 1 .. src + n`).
///
/// # Safety
/// As for `memcpy`, with that weaker condition on overlap.
#[inline(always)]
unsafe fn copy_forward(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: the caller's ranges; the direction flag is clear on function entry (ABI).
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rcx") n => _,
            inout("rdi") dst => _,
            inout("rsi") src => _,
            options(nostack, preserves_flags)
        );
    }
}

/// `n` bytes from `src` to `dst`, last byte first (for a `dst` inside `src + 1 .. src + n`).
///
/// # Safety
/// As for `memmove`, with `n > 0`.
#[inline(always)]
unsafe fn copy_backward(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: the caller's ranges; the direction flag is set only around the copy and cleared
    // again, as the ABI requires on return.
    unsafe {
        std::arch::asm!(
            "std",
            "rep movsb",
            "cld",
            inout("rcx") n => _,
            inout("rdi") dst.add(n - 1) => _,
            inout("rsi") src.add(n - 1) => _,
            options(nostack)
        );
    }
}

/// C's `memcpy`.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes, the two not overlapping.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub(crate) unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe {
        if n <= SMALL {
            copy_small(dst, src, n);
        } else {
            copy_forward(dst, src, n);
        }
    }
    dst
}

/// C's `memmove`.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes; they may overlap.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub(crate) unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller's contract; a forward copy is right unless `dst` starts inside the
    // source after its first byte.
    unsafe {
        if n <= SMALL {
            copy_small(dst, src, n);
        } else if (dst as usize).wrapping_sub(src as usize) >= n {
            copy_forward(dst, src, n);
        } else {
            copy_backward(dst, src, n);
        }
    }
    dst
}

/// C's `memcmp`: the sign of the first differing byte's difference (as unsigned bytes).
///
/// # Safety
/// `a` and `b` readable for `n` bytes.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub(crate) unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: every offset read is below `n`.
    unsafe {
        let word = |p: *const u8, at: usize| u64::from_be(p.add(at).cast::<u64>().read_unaligned());
        let mut at = 0;
        while at + 8 <= n {
            let (x, y) = (word(a, at), word(b, at));
            if x != y {
                return if x < y { -1 } else { 1 };
            }
            at += 8;
        }
        if n >= 8 {
            // the last eight bytes, some already found equal
            let (x, y) = (word(a, n - 8), word(b, n - 8));
            return i32::from(x > y) - i32::from(x < y);
        }
        while at < n {
            let (x, y) = (*a.add(at), *b.add(at));
            if x != y {
                return i32::from(x) - i32::from(y);
            }
            at += 1;
        }
    }
    0
}

/// C's `bcmp`: zero when the bytes are equal (what comparing slices for equality calls).
///
/// # Safety
/// `a` and `b` readable for `n` bytes.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub(crate) unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { memcmp(a, b, n) }
}

#[cfg(test)]
mod tests;
