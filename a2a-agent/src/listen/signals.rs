//! The process around a server: the async runtime both binaries serve on, and the signals
//! they answer (SIGINT/SIGTERM: shut down; SIGHUP: reload).

/// The multi-threaded async runtime both binaries serve on, with `workers` threads (0: one per
/// CPU the process may use, tokio's default). On a machine the server shares with busy
/// neighbours (the agents behind a gateway, a load generator) fewer threads spend less CPU per
/// request: fewer cross-thread wake-ups (docs/benchmarks.md, "fifth round").
pub fn runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all();
    if workers > 0 {
        rt.worker_threads(workers);
    }
    rt.build()
}

/// SIGHUP, the conventional "reload your configuration" signal: once made, the signal no longer
/// ends the process; [`Hangups::recv`] returns at each one. Elsewhere than Unix it never returns.
pub struct Hangups {
    #[cfg(unix)]
    sig: tokio::signal::unix::Signal,
}

impl Hangups {
    /// Starts catching SIGHUP (inside a Tokio runtime).
    pub fn new() -> std::io::Result<Hangups> {
        Ok(Hangups {
            #[cfg(unix)]
            sig: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?,
        })
    }

    /// The next SIGHUP.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        {
            if self.sig.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await;
    }
}

/// Waits for SIGINT (Ctrl-C) or SIGTERM, whichever comes first.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(t) => t,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
