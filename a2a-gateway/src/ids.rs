//! Random ids and hex: secrets and tokens from the system's secure generator, ids that need only
//! be unique (trace, span, JSON-RPC ids) from a per-thread generator.

/// A fresh random secret (32 bytes as hex), e.g. a run's admin token.
pub fn random_token() -> String {
    random_hex(32)
}

/// `n` random bytes as hex, for ids that must be unique but are not secrets (trace and span
/// ids, JSON-RPC ids of peer calls): a per-thread generator seeded by the OS, no system call.
pub(crate) fn id_hex(n: usize) -> String {
    let mut b = vec![0u8; n];
    fastrand::fill(&mut b);
    hex(&b)
}

/// `n` random bytes as hex from the system's secure generator (secrets, tokens, ids that
/// grant something).
pub(crate) fn random_hex(n: usize) -> String {
    use aws_lc_rs::rand::SecureRandom;
    let mut b = vec![0u8; n];
    let _ = aws_lc_rs::rand::SystemRandom::new().fill(&mut b);
    hex(&b)
}

/// Lower-case hex of `bytes` (one allocation; ids and digests on every hop).
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_lower_case_two_digits_per_byte() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
        let r = super::random_hex(8);
        assert_eq!(r.len(), 16);
        assert!(
            r.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
}
