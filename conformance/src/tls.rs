//! TLS for tests: a CA generated per test ([`TestCa`]) and a TLS listener on 127.0.0.1 that
//! forwards the decrypted bytes to a plain server ([`TlsProxy`]), so a plaintext agent (h2c
//! gRPC, HTTP) is reached over `https` with a certificate for `localhost` and `127.0.0.1`.

use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA and one server certificate it signed (for `localhost` and `127.0.0.1`).
pub struct TestCa {
    /// The CA certificate (PEM): what a client adds to its trusted roots.
    pub ca_pem: String,
    server_cert: CertificateDer<'static>,
    server_key: Vec<u8>,
}

impl TestCa {
    /// Generates the CA and the server certificate.
    pub fn new() -> anyhow::Result<TestCa> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "a2a-rs test CA");
        let ca = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate()?;
        let params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])?;
        let cert = params.signed_by(&key, &issuer)?;
        Ok(TestCa {
            ca_pem: ca.pem(),
            server_cert: cert.der().clone(),
            server_key: key.serialize_der(),
        })
    }
}

/// A TLS listener (ALPN `h2`, then `http/1.1`) forwarding each connection to `upstream`;
/// stopped when dropped.
pub struct TlsProxy {
    /// The listening address.
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl TlsProxy {
    /// Listens on 127.0.0.1 (port 0) with `ca`'s server certificate.
    pub async fn start(ca: &TestCa, upstream: SocketAddr) -> anyhow::Result<TlsProxy> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ca.server_key.clone()));
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![ca.server_cert.clone()], key)?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return; // a refused handshake (the client's certificate check)
                    };
                    if let Ok(mut up) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                    }
                });
            }
        });
        Ok(TlsProxy { addr, task })
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
