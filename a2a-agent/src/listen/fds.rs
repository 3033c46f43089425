//! The file-descriptor bound of the connection cap: the process's `RLIMIT_NOFILE` and the cap
//! kept below it.

use super::REFUSAL_SLOTS;

/// File descriptors kept free below `RLIMIT_NOFILE` (stores, peers, logs, child processes).
const FD_MARGIN: u64 = 256;

/// The soft `RLIMIT_NOFILE` of the process (unix), if known.
pub fn fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0;
        // rlim_t is u64 on Linux, not everywhere.
        #[allow(clippy::unnecessary_cast)]
        let cur = r.rlim_cur as u64;
        (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(cur)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The connection cap actually applied: the configured one (0 = 10000), kept below the fd
/// limit minus a margin and the refusal slots.
pub fn effective_max_connections(configured: usize) -> usize {
    let wanted = if configured == 0 { 10_000 } else { configured };
    match fd_limit() {
        Some(l) => {
            let room = l.saturating_sub(FD_MARGIN + REFUSAL_SLOTS as u64).max(16);
            wanted.min(usize::try_from(room).unwrap_or(usize::MAX))
        }
        None => wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_below_the_fd_limit() {
        assert_eq!(
            effective_max_connections(50),
            50.min(effective_max_connections(0))
        );
        if let Some(l) = fd_limit().filter(|l| *l > 1024) {
            let c = effective_max_connections(usize::MAX) as u64;
            assert!(c + FD_MARGIN + REFUSAL_SLOTS as u64 <= l, "{c} vs {l}");
        }
    }
}
