//! A file mapped read-only into memory for the length of one call: the host's side of a scan
//! that reads a large segment file without copying it into a Python `bytes` first.
//!
//! Owns: opening the file, mapping it whole (private, read-only) and unmapping it when dropped.
//! Never: reading what it maps; the core does that, on the slice this hands it. A file that
//! another process truncates while it is mapped faults on access (SIGBUS), as any mapping does:
//! a rolled segment file is never truncated, and the scan is of those. Off Unix (no mmap here), the
//! file is read into memory instead.

use std::path::Path;

/// A whole file, mapped.
#[cfg(unix)]
pub(crate) struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// The mapping is read-only and private: nothing writes through it, so any thread may read it.
#[cfg(unix)]
unsafe impl Send for Mapped {}
#[cfg(unix)]
unsafe impl Sync for Mapped {}

/// Pages of the file mapped at once rather than faulted in one by one (Linux alone has it).
#[cfg(target_os = "linux")]
const POPULATE: libc::c_int = libc::MAP_POPULATE;
#[cfg(all(unix, not(target_os = "linux")))]
const POPULATE: libc::c_int = 0;

#[cfg(unix)]
impl Mapped {
    /// Maps `path`; an empty file maps to an empty slice (mmap refuses a length of 0).
    pub(crate) fn open(path: &Path) -> std::io::Result<Mapped> {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open(path)?;
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::FileTooLarge))?;
        if len == 0 {
            return Ok(Mapped {
                ptr: std::ptr::null_mut(),
                len,
            });
        }
        // SAFETY: a fresh private read-only mapping of an open file; the descriptor may close
        // after mmap returns (the mapping keeps the file).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | POPULATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapped { ptr, len })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` maps `len` readable bytes until `drop`.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

#[cfg(unix)]
impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len != 0 {
            // SAFETY: the mapping made in `open`, unmapped once. A failure leaves it mapped.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

/// The whole file, read (no mmap off Unix).
#[cfg(not(unix))]
pub(crate) struct Mapped(Vec<u8>);

#[cfg(not(unix))]
impl Mapped {
    pub(crate) fn open(path: &Path) -> std::io::Result<Mapped> {
        Ok(Mapped(std::fs::read(path)?))
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}
