//! TLS trust shared by every binding: the platform's root store (rustls-platform-verifier, as
//! reqwest is built in this workspace) plus extra root certificates given as PEM
//! ([`crate::ClientBuilder::root_certificates_pem`]) for private CAs and tests. The HTTP bindings
//! get them through reqwest's `add_root_certificate`; the gRPC transport through
//! [`client_config`].

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::error::ClientError;

/// Extra trusted root certificates (DER), cheap to clone.
pub type ExtraRoots = Arc<Vec<CertificateDer<'static>>>;

/// The certificates of a PEM bundle (at least one `CERTIFICATE` block).
pub fn parse_pem(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, ClientError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ClientError::Usage(format!("root certificates (PEM): {e}")))?;
    if certs.is_empty() {
        return Err(ClientError::Usage(
            "root certificates (PEM): no CERTIFICATE block found".into(),
        ));
    }
    Ok(certs)
}

#[cfg(feature = "grpc")]
/// The rustls configuration of `https` gRPC calls: aws-lc-rs, the platform verifier with
/// `extra` roots added (ALPN `h2` is set by the connector).
pub fn client_config(
    extra: &[CertificateDer<'static>],
) -> Result<rustls::ClientConfig, ClientError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = if extra.is_empty() {
        rustls_platform_verifier::Verifier::new(provider.clone())
    } else {
        rustls_platform_verifier::Verifier::new_with_extra_roots(
            extra.iter().cloned(),
            provider.clone(),
        )
    }
    .map_err(|e| ClientError::Usage(format!("TLS verifier: {e}")))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Usage(format!("TLS configuration: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(config)
}
