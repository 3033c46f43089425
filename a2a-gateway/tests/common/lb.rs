//! A small TCP load balancer for loopback (issue 32: replicas behind a load balancer; used by
//! the chaos tests and by `cargo xtask cluster` through the example `cluster`): each accepted
//! client connection goes to the next backend in round robin, and its bytes are passed both
//! ways unchanged until either side closes, so HTTP/1.1 keep-alive and SSE streams pass
//! through as they are (round robin per client connection, not per request). A backend that
//! refuses the connection (a dead replica) is skipped: the next one is tried, and the client
//! is dropped only when every backend refuses.
//!
//! Hand-written around `tokio::io::copy_bidirectional` (tokio is the crate's runtime already,
//! and the copy with its half-close handling is tokio's, not ours). A proxy crate was not taken:
//! the HTTP ones (hyper-reverse-proxy, pingora) parse and re-frame requests, which is more than
//! a per-connection pass-through needs and would hide what the replicas themselves answer.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A running load balancer; stopped (no new connections, open ones cut) when dropped.
pub struct Lb {
    /// The address clients connect to.
    pub addr: SocketAddr,
    accept: JoinHandle<()>,
    conns: Arc<std::sync::Mutex<tokio::task::JoinSet<()>>>,
    open: Open,
}

/// Open connections per backend.
type Open = Arc<std::sync::Mutex<HashMap<SocketAddr, usize>>>;

impl Lb {
    /// Listens on `listen` (`127.0.0.1:0` for a free port) and balances over `backends`.
    pub async fn start(listen: SocketAddr, backends: Vec<SocketAddr>) -> std::io::Result<Lb> {
        let listener = TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let backends: Arc<[SocketAddr]> = backends.into();
        let next = Arc::new(AtomicUsize::new(0));
        let conns = Arc::new(std::sync::Mutex::new(tokio::task::JoinSet::new()));
        let open = Open::default();
        let (c, o) = (conns.clone(), open.clone());
        let accept = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let first = next.fetch_add(1, Ordering::Relaxed);
                let backends = backends.clone();
                if let Ok(mut set) = c.lock() {
                    // Reap the ended connections so the set stays as large as what is open.
                    while set.try_join_next().is_some() {}
                    set.spawn(pass(client, backends, first, o.clone()));
                }
            }
        });
        Ok(Lb {
            addr,
            accept,
            conns,
            open,
        })
    }

    /// The backends that have client connections open now (a test finds the replica holding
    /// its stream).
    pub fn open_to(&self) -> Vec<SocketAddr> {
        self.open
            .lock()
            .map(|m| m.iter().filter(|(_, n)| **n > 0).map(|(a, _)| *a).collect())
            .unwrap_or_default()
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Lb {
    fn drop(&mut self) {
        self.accept.abort();
        if let Ok(mut set) = self.conns.lock() {
            set.abort_all();
        }
    }
}

/// Connects to the first backend (from `first`, round robin) that accepts, then copies both
/// ways until both sides are closed (or one fails: a killed replica resets, the client sees
/// its connection dropped).
async fn pass(mut client: TcpStream, backends: Arc<[SocketAddr]>, first: usize, open: Open) {
    let _ = client.set_nodelay(true);
    for i in 0..backends.len() {
        let to = backends[(first + i) % backends.len()];
        if let Ok(mut server) = TcpStream::connect(to).await {
            let _ = server.set_nodelay(true);
            let _counted = Counted::new(open, to);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            return;
        }
    }
}

/// One open connection to a backend, counted while it lives.
struct Counted(Open, SocketAddr);

impl Counted {
    fn new(open: Open, to: SocketAddr) -> Counted {
        if let Ok(mut m) = open.lock() {
            *m.entry(to).or_insert(0) += 1;
        }
        Counted(open, to)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Ok(mut m) = self.0.lock()
            && let Some(n) = m.get_mut(&self.1)
        {
            *n = n.saturating_sub(1);
        }
    }
}
