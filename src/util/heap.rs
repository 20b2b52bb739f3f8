//! Giving freed heap memory back to the system after a large structure was dropped (the index
//! a server built, once it is mapped from the file it wrote instead).
#![allow(unsafe_code)]

/// Returns free heap pages to the system. glibc keeps memory freed by worker threads in their
/// arenas (hundreds of MB after a large build); musl and the others return it as they free,
/// so there this does nothing.
pub fn release_free_memory() {
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
