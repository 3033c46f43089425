//! Corpora for the cost of [`super::find`]: ordinary prose and adversarial texts, each built in
//! code at any size (deterministic, no download).
//!
//! Used by the doubling test (`pii/cost_tests.rs`, a step counter) and by the benchmark
//! `examples/pii_adversarial.rs` (MB/s), which includes this file with `#[path]`: it names
//! nothing of the crate, so it compiles in both places.

/// A corpus: its name, what it attacks, and a builder of about `n` bytes of it.
pub struct Corpus {
    /// Short name, printed by the benchmark.
    pub name: &'static str,
    /// What it is built to stress.
    pub about: &'static str,
    /// Builds about `n` bytes (never less than `n`, at most one unit more).
    pub build: fn(usize) -> String,
}

/// Every corpus: ordinary prose first, then the adversarial ones.
pub const CORPORA: &[Corpus] = &[
    Corpus {
        name: "prose",
        about: "English prose with numbers, dates and about one PII item per 2 KB",
        build: prose,
    },
    Corpus {
        name: "pem-headers",
        about: "`-----BEGIN RSA PRIVATE KEY-----` lines, no END line",
        build: |n| repeat("-----BEGIN RSA PRIVATE KEY-----\n", n),
    },
    Corpus {
        name: "pem-near-end",
        about: "key headers each followed by an END line that is not a key's",
        build: |n| {
            repeat(
                "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END CERTIFICATE-----\n",
                n,
            )
        },
    },
    Corpus {
        name: "pem-one-end",
        about: "key headers and a single END line at the very end",
        build: |n| {
            let mut s = repeat("-----BEGIN EC PRIVATE KEY-----\n", n);
            s.push_str("-----END EC PRIVATE KEY-----\n");
            s
        },
    },
    Corpus {
        name: "card-near-miss",
        about: "16-digit groups failing Luhn, spaced, dashed and compact",
        build: |n| {
            repeat(
                "4111 1111 1111 1112 5555-5555-5555-4445 4111111111111112 ",
                n,
            )
        },
    },
    Corpus {
        name: "digit-run",
        about: "one run of digits, no separator",
        build: |n| repeat("0123456789", n),
    },
    Corpus {
        name: "spaced-digits",
        about: "single digits with single spaces, dots and dashes (one long candidate)",
        build: |n| repeat("1 2-3 4.5 6 7-8 9.0 ", n),
    },
    Corpus {
        name: "dotted-quads",
        about: "dotted numbers that never stand alone as IPv4, and phone-like groups",
        build: |n| repeat("1.22.33.44.55.66.77.88.99 +44 20 7946 09 ", n),
    },
    Corpus {
        name: "email-near-miss",
        about: "`@` everywhere: one-letter TLDs, no domain, labels without a TLD",
        build: |n| {
            repeat(
                "ann.lee@example.o bob@ x@y ann@ex-ample.c0m @@ a.b@c.d1 ",
                n,
            )
        },
    },
    Corpus {
        name: "email-long-local",
        about: "local parts far longer than 64 bytes before each `@`",
        build: |n| {
            let unit = format!("{}@example.org ", "ab.cd-ef".repeat(35));
            repeat(&unit, n)
        },
    },
    Corpus {
        name: "email-labels",
        about: "one address whose domain goes on with labels that end no TLD",
        build: |n| {
            let mut s = String::from("ann@example.org");
            s.push_str(&repeat(".x1", n));
            s
        },
    },
    Corpus {
        name: "ipv6-run",
        about: "one run of hex groups and colons",
        build: |n| repeat("fe80:1:22:333:4444:a:bb:ccc:", n),
    },
    Corpus {
        name: "ipv6-colons",
        about: "runs of colons with hex digits between",
        build: |n| repeat("a::b:::c::::1.2.3.4:: ", n),
    },
    Corpus {
        name: "jwt-like",
        about: "`eyJ` tokens: a valid header without a payload, and joined near-misses",
        build: |n| {
            repeat(
                "eyJhbGciOiJIUzI1NiJ9.e eyJaaaaaaaaaaaaaaa.eyJbbbbbbbbbbb.eyJccccccccc-",
                n,
            )
        },
    },
    Corpus {
        name: "token-prefixes",
        about: "secret prefixes with too-short bodies (`sk-`, `ghp_`, `AKIA`, `xoxb-`)",
        build: |n| {
            repeat(
                "sk-abc ghp_abcdef AKIA1234 xoxb-12 glpat-x a2agw_y AIzaSy ",
                n,
            )
        },
    },
    Corpus {
        name: "pii-dense",
        about: "valid items back to back (many findings to resolve)",
        build: |n| {
            repeat(
                "ann@example.org 4111 1111 1111 1111 10.0.0.1 123-45-6789 2001:db8::1 ",
                n,
            )
        },
    },
    Corpus {
        name: "fullwidth-digits",
        about: "card-like groups of fullwidth digits with ideographic spaces (normalised)",
        build: |n| {
            repeat(
                "４１１１\u{3000}１１１１\u{3000}１１１１\u{3000}１１１２ ",
                n,
            )
        },
    },
    Corpus {
        name: "other-digits",
        about: "Arabic-Indic, Devanagari and Thai digits with en dashes (normalised)",
        build: |n| repeat("١٢٣\u{2013}٤٥\u{2013}٦٧٨٩ १२३४ ๑๒๓๔ ", n),
    },
    Corpus {
        name: "zero-width",
        about: "a zero-width space or joiner after every character",
        build: |n| {
            repeat(
                "a\u{200B}n\u{200D}n\u{200B}@\u{200B}4\u{200B}1\u{2060}1 ",
                n,
            )
        },
    },
    Corpus {
        name: "combining-marks",
        about: "combining marks on every digit and letter",
        build: |n| repeat("4\u{336}1\u{336}1\u{301}1\u{301} e\u{301}x\u{308} ", n),
    },
    Corpus {
        name: "percent-escapes",
        about: "`%XX` escapes everywhere, some not UTF-8",
        build: |n| repeat("%34%31%31%31%20%ff%fe%E2%80%8B%41 ", n),
    },
    Corpus {
        name: "base64-text",
        about: "base64 runs that decode to text without PII (each decoded and scanned)",
        build: |n| repeat("SGVsbG8sIHdvcmxkISBUaGlzIGlzIGZpbmUu ", n),
    },
    Corpus {
        name: "base64-run",
        about: "one base64 run of text, decoded and scanned whole",
        build: |n| repeat("SGVsbG8sIHdvcmxkISBUaGlzIGlzIGZpbmUu", n),
    },
];

/// `unit` repeated until the text has at least `n` bytes.
pub fn repeat(unit: &str, n: usize) -> String {
    let times = n.div_ceil(unit.len().max(1));
    unit.repeat(times)
}

/// The prose vocabulary (also of `examples/pii_bench.rs`).
pub const WORDS: &[&str] = &[
    "the",
    "agent",
    "task",
    "report",
    "quarterly",
    "results",
    "shows",
    "that",
    "our",
    "customer",
    "revenue",
    "grew",
    "by",
    "percent",
    "in",
    "region",
    "while",
    "costs",
    "stayed",
    "flat",
    "and",
    "we",
    "expect",
    "further",
    "growth",
    "next",
    "year",
    "please",
    "review",
    "attached",
    "summary",
    "before",
    "meeting",
    "on",
    "Monday",
    "with",
    "team",
    "about",
    "delivery",
    "schedule",
    "of",
    "new",
    "features",
    "including",
    "search",
    "export",
    "a",
    "is",
    "to",
    "for",
    "this",
    "it",
];
/// Number-like words of the prose (none of them PII).
pub const NUMBERS: &[&str] = &[
    "2024",
    "15",
    "3.5",
    "$1,299.00",
    "v1.2.3",
    "2026-12-04",
    "10:30",
    "42",
    "#10023",
    "7%",
];
/// One value of each PII type, mixed into the prose.
pub const PII: &[&str] = &[
    "ann.lee@example.org",
    "+44 20 7946 0958",
    "(415) 555-0132",
    "4111 1111 1111 1111",
    "DE89 3704 0044 0532 0130 00",
    "123-45-6789",
    "192.168.10.20",
    "2001:db8::8a2e:370:7334",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
];

/// Deterministic English-like prose (xorshift): words, a number in 14, a PII item per ~2 KB.
pub fn prose(n: usize) -> String {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |k: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as usize
    };
    let mut s = String::with_capacity(n + 64);
    while s.len() < n {
        match next(1000) {
            0..=2 => s.push_str(PII[next(PII.len())]),
            3..=70 => s.push_str(NUMBERS[next(NUMBERS.len())]),
            _ => s.push_str(WORDS[next(WORDS.len())]),
        }
        s.push_str(if next(12) == 0 { ". " } else { " " });
    }
    s
}
