//! Memory for big tables: growable arrays (and a prefetch hint) for the tables touched at
//! random while a segment is built (the term interner's slots, the per-term state, the
//! posting pool), and when the heap gives freed memory back (held during a first build, at once
//! otherwise, and all of it once a built index is dropped). Past a couple of MiB the tables live
//! in anonymous memory advised to be backed by transparent huge pages: with 4 KiB pages nearly
//! every random access to a table of tens of MiB also misses the TLB, and the page walks cost a
//! tenth of the first build. Below that they are ordinary vectors. A mapped array reserves
//! address space beyond its length and grows in place, touching each page once, when it is
//! first written. A segment's text is written into such an array too ([`HugeVec::freeze`]
//! keeps it where it is): one page fault per 2 MiB instead of per 4 KiB, and no copy when the
//! segment is finished.
#![allow(unsafe_code)]

use memmap2::{Advice, MmapMut};
// links mimalloc's C library, whose `mi_collect` [`release_free_memory`] calls
use mimalloc as _;
use std::mem::{MaybeUninit, align_of, size_of};
use std::ops::{Deref, DerefMut};

/// Arrays smaller than this many bytes stay on the heap (a huge page is 2 MiB).
const MIN_MAP: usize = 2 << 20;

/// Address space a mapped array reserves up front, so that it grows in place. Growing by a
/// new mapping copied the elements, and filled the new room at once: every page of the old and
/// the new mapping was touched, unused room included, and each freshly touched huge page is one
/// the kernel zeroes (at 1M turns on this project's 2-core VM, 1.3 s of CPU per first build,
/// for the chain of doublings as much as for the final tables). Pages never touched take no
/// memory; an array that outgrows its reservation moves to a larger one.
const RESERVE: usize = 256 << 20;

/// A growable array of plain values, in huge pages once large (see the module).
pub(crate) struct HugeVec<T: Copy> {
    len: usize,
    store: Store<T>,
    /// A mapping failed: stay on the heap.
    heap_only: bool,
}

enum Store<T> {
    /// Holds exactly the array's elements.
    Heap(Vec<T>),
    /// A mapping with room for `cap` elements, of which the first `len` (the array's) were
    /// written; those past the largest length yet were never touched.
    Map { map: MmapMut, cap: usize },
}

impl<T: Copy> Default for HugeVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> HugeVec<T> {
    const ALIGNED: () = assert!(align_of::<T>() <= 4096 && size_of::<T>() > 0);

    pub(crate) fn new() -> Self {
        Self {
            len: 0,
            store: Store::Heap(Vec::new()),
            heap_only: false,
        }
    }

    /// `len` copies of `value`.
    #[cfg(test)]
    pub(crate) fn filled(len: usize, value: T) -> Self {
        let mut v = Self::new();
        v.resize(len, value);
        v
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops every element, keeping the memory (a mapping stays mapped, its pages resident), so
    /// that refilling it costs no page faults and no zeroing by the kernel.
    pub(crate) fn clear(&mut self) {
        if let Store::Heap(v) = &mut self.store {
            v.clear();
        }
        self.len = 0;
    }

    /// Appends `value`.
    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        self.reserve(self.len + 1);
        match &mut self.store {
            Store::Heap(v) => v.push(value),
            Store::Map { map, cap } => {
                Self::room(map, *cap)[self.len].write(value);
            }
        }
        self.len += 1;
    }

    /// Appends `items`.
    #[inline]
    pub(crate) fn extend_from_slice(&mut self, items: &[T]) {
        let end = self.len + items.len();
        self.reserve(end);
        match &mut self.store {
            Store::Heap(v) => v.extend_from_slice(items),
            Store::Map { map, cap } => {
                let room = &mut Self::room(map, *cap)[self.len..end];
                // SAFETY: `room` is `items.len()` elements of the mapping, which `items` (a
                // shared borrow) cannot overlap; `MaybeUninit<T>` has `T`'s layout.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        items.as_ptr(),
                        room.as_mut_ptr().cast::<T>(),
                        items.len(),
                    );
                }
            }
        }
        self.len = end;
    }

    /// Grows (or shrinks) to `len` elements, new ones set to `value`.
    pub(crate) fn resize(&mut self, len: usize, value: T) {
        self.reserve(len);
        match &mut self.store {
            Store::Heap(v) => v.resize(len, value),
            Store::Map { map, cap } => {
                if len > self.len {
                    for x in &mut Self::room(map, *cap)[self.len..len] {
                        x.write(value);
                    }
                }
            }
        }
        self.len = len;
    }

    /// Makes room for `total` elements in all: in a mapping once they take [`MIN_MAP`] bytes
    /// (unless no mapping could be had: then on the heap for good).
    #[inline]
    fn reserve(&mut self, total: usize) {
        match &self.store {
            Store::Heap(_) if self.heap_only || total * size_of::<T>() < MIN_MAP => {}
            Store::Map { cap, .. } if total <= *cap => {}
            _ => self.remap(total),
        }
    }

    /// Moves the elements to a new mapping with room for at least `total`: a reservation of
    /// [`RESERVE`] bytes (or twice the old room) when the system lets address space be
    /// reserved without committing memory, else just the room needed.
    #[cold]
    fn remap(&mut self, total: usize) {
        let old = match &self.store {
            Store::Heap(_) => 0,
            Store::Map { cap, .. } => *cap,
        };
        let room = total.max(old * 2).max(MIN_MAP / size_of::<T>());
        let reserved = (RESERVE / size_of::<T>()).max(room);
        let mapped = match may_reserve().then(|| Self::mapped(reserved, true)) {
            Some(Ok(map)) => Ok((map, reserved)),
            _ => Self::mapped(room, false).map(|map| (map, room)),
        };
        match mapped {
            Ok((mut map, cap)) => {
                let len = self.len;
                for (x, &v) in Self::room(&mut map, cap)[..len].iter_mut().zip(self.iter()) {
                    x.write(v);
                }
                self.store = Store::Map { map, cap };
            }
            Err(e) => {
                // no mapping to be had: an ordinary vector does the same work, only slower
                tracing::debug!(error = %e, "huge-page array falls back to the heap");
                self.store = Store::Heap(self.to_vec());
                self.heap_only = true;
            }
        }
    }

    /// A fresh mapping with room for `cap` elements; `reserve`: without committing memory for
    /// it (`MAP_NORESERVE`).
    fn mapped(cap: usize, reserve: bool) -> std::io::Result<MmapMut> {
        let () = Self::ALIGNED;
        let bytes = cap
            .checked_mul(size_of::<T>())
            .ok_or_else(|| std::io::Error::other("array too large"))?;
        let mut options = memmap2::MmapOptions::new();
        options.len(bytes);
        if reserve {
            options.no_reserve_swap();
        }
        let map = options.map_anon()?;
        // only a hint: without huge pages the array works the same
        let _ = map.advise(Advice::HugePage);
        Ok(map)
    }

    /// The room of a mapping made by [`Self::mapped`] for `cap` elements.
    fn room(map: &mut MmapMut, cap: usize) -> &mut [MaybeUninit<T>] {
        debug_assert!(map.len() >= cap * size_of::<T>());
        // SAFETY: `map` was made by `mapped` with room for `cap` elements, page-aligned (4096
        // ≥ align_of::<T>(), checked by `ALIGNED`); `MaybeUninit<T>` has no validity
        // requirement.
        unsafe { std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<MaybeUninit<T>>(), cap) }
    }

    /// The first `len` elements of a mapping made by [`Self::mapped`]; `len` is the array's
    /// length, and every element below it was written.
    fn view_mut(map: &mut MmapMut, len: usize) -> &mut [T] {
        debug_assert!(map.len() >= len * size_of::<T>());
        // SAFETY: as in `room`; the array's first `len` elements were written with values of
        // `T` (by `push`, `resize` or `remap`, which grow the length only over what they write)
        // and only overwritten with such since.
        unsafe { std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), len) }
    }

    fn view(map: &MmapMut, len: usize) -> &[T] {
        debug_assert!(map.len() >= len * size_of::<T>());
        // SAFETY: as in `view_mut`.
        unsafe { std::slice::from_raw_parts(map.as_ptr().cast::<T>(), len) }
    }
}

/// The bytes of a [`HugeVec<u8>`] that is given up ([`HugeVec::freeze`]): a vector, or the
/// mapping they were written in, cut to them (on Linux; elsewhere the rest stays reserved but
/// never touched, so it takes no memory).
pub(crate) enum Frozen {
    Heap(Vec<u8>),
    Map(MmapMut, usize),
}

impl HugeVec<u8> {
    /// The bytes, without copying them: a mapping is kept where it is, its room past them
    /// given back; a vector loses its spare capacity.
    pub(crate) fn freeze(self) -> Frozen {
        match self.store {
            Store::Map { mut map, .. } if self.len > 0 => {
                #[cfg(target_os = "linux")]
                // SAFETY: the array is given up, so nothing refers into the mapping; shrinking
                // (no `may_move`) keeps it where it is, and what is cut was never handed out.
                // A failure leaves the mapping whole, which is only more reserved room.
                let _ = unsafe { map.remap(self.len, memmap2::RemapOptions::new()) };
                Frozen::Map(map, self.len)
            }
            Store::Map { .. } => Frozen::Heap(Vec::new()),
            Store::Heap(mut v) => {
                v.shrink_to_fit();
                Frozen::Heap(v)
            }
        }
    }
}

/// Whether address space may be reserved without committing memory for it: not under strict
/// overcommit accounting (`vm.overcommit_memory` = 2), where `MAP_NORESERVE` is ignored and a
/// reservation would use up the commit limit other allocations need. Read once.
fn may_reserve() -> bool {
    static MAY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MAY.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
            .map_or(true, |mode| mode.trim() != "2")
    })
}

/// Asks the CPU to bring `x`'s cache line closer (a hint, so that a lookup issued a little
/// later does not stall on the miss); nothing on other architectures than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and never faults; the address comes
    // from a reference besides.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

impl<T: Copy> std::fmt::Debug for HugeVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HugeVec(len {})", self.len)
    }
}

impl<T: Copy> Deref for HugeVec<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match &self.store {
            Store::Heap(v) => v,
            Store::Map { map, .. } => Self::view(map, self.len),
        }
    }
}

impl<T: Copy> DerefMut for HugeVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.store {
            Store::Heap(v) => v,
            Store::Map { map, .. } => Self::view_mut(map, self.len),
        }
    }
}

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_t` (mimalloc.h); a test checks
/// that this option has the documented default of the linked version (1000 ms).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

unsafe extern "C" {
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Whether memory freed now stays with the allocator for a second before going back to the
/// system. Held while a first build runs (memory freed there is soon needed again, and taking
/// it back costs page faults and zeroing); otherwise given back at once, so that the servers
/// sharing one index each keep only what they use.
pub fn hold_freed_memory(hold: bool) {
    // SAFETY: setting an option takes no pointer and is safe from any thread at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, if hold { 1000 } else { 0 });
    }
}

/// Returns free heap pages to the system: mimalloc's (the binary's allocator, which otherwise
/// gives them back after its purge delay, see [`hold_freed_memory`]) at once, and glibc's,
/// which keeps memory freed by worker threads in their arenas (what its `malloc` still serves:
/// C code such as SQLite's).
pub(crate) fn release_free_memory() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: `mi_collect` takes no pointer and only walks mimalloc's own heaps; it is safe
    // to call from any thread at any time (it is linked whether or not mimalloc is the
    // global allocator of this executable).
    unsafe {
        mi_collect(true);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: `malloc_trim` takes no pointer, only walks glibc's own arenas, and is safe
        // to call from any thread at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HugeVec;

    #[test]
    fn the_purge_delay_option_is_the_one_named() {
        // SAFETY: reading and setting an option takes no pointer.
        let default = unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(
                default, 1000,
                "option 15 is not mimalloc's purge delay (its default)"
            );
        }
        super::hold_freed_memory(false);
        assert_eq!(
            unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) },
            0
        );
        super::hold_freed_memory(true);
        assert_eq!(
            unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) },
            1000
        );
    }

    #[test]
    fn grows_from_heap_to_mapping_keeping_values() {
        let mut v: HugeVec<(u64, u32)> = HugeVec::new();
        for i in 0..400_000u64 {
            v.push((i, i as u32 * 3));
        }
        assert_eq!(v.len(), 400_000);
        assert!(
            v.iter()
                .enumerate()
                .all(|(i, &(a, b))| a == i as u64 && b == i as u32 * 3)
        );
        v.resize(500_000, (7, 7));
        assert_eq!(v[399_999], (399_999, 1_199_997));
        assert_eq!(v[499_999], (7, 7));
        v[10] = (1, 1);
        assert_eq!(v[10], (1, 1));
        v.resize(5, (0, 0));
        assert_eq!(&v[..], &[(0, 0), (1, 3), (2, 6), (3, 9), (4, 12)]);
    }

    #[test]
    fn grows_in_place_and_past_its_reservation() {
        let mut b: HugeVec<u8> = HugeVec::default();
        b.resize(5 << 20, 7);
        b.clear();
        b.resize(3 << 20, 1);
        assert!(b.iter().all(|&x| x == 1));
        // past its reservation: moved, values kept
        let mut big: HugeVec<u64> = HugeVec::filled(3, 1);
        big[2] = 5;
        let n = super::RESERVE / 8 + 3;
        big.resize(n, 2);
        assert_eq!((big[1], big[2], big[n - 1], big.len()), (1, 5, 2, n));
        big.push(4);
        assert_eq!(big[n], 4);
    }

    #[test]
    fn frozen_bytes_are_the_pushed_ones() {
        for n in [0usize, 100, 3 << 20] {
            let mut b: HugeVec<u8> = HugeVec::default();
            let chunk: Vec<u8> = (0..=250u8).collect();
            while b.len() + chunk.len() <= n {
                b.extend_from_slice(&chunk);
            }
            b.extend_from_slice(&chunk[..n - b.len()]);
            let want: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            assert_eq!(&b[..], &want[..]);
            match b.freeze() {
                super::Frozen::Heap(v) => assert!(n < (2 << 20) && v == want),
                super::Frozen::Map(m, len) => {
                    assert!(n >= (2 << 20) && len == n && m[..len] == want[..]);
                    #[cfg(target_os = "linux")]
                    assert_eq!(m.len(), n, "the mapping is cut to the bytes");
                }
            }
        }
    }

    #[test]
    fn filled_and_bytes() {
        let v = HugeVec::filled(3 << 20, 9u8);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&b| b == 9));
        let mut b: HugeVec<u8> = HugeVec::default();
        assert!(b.is_empty());
        b.resize(10, 1);
        b.resize(5 << 20, 2);
        assert_eq!((b[9], b[10], b[(5 << 20) - 1]), (1, 2, 2));
    }
}
