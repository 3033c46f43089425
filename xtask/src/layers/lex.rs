//! A small Rust tokenizer for the layer check: identifiers, `::` and single punctuation, each with
//! its line, with comments, string/char/byte literals and lifetimes dropped (so a path inside a
//! comment or a string literal is never an import).

/// One token of Rust source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword (`r#name` gives `name`); numbers come out as identifiers too.
    Ident(String),
    /// `::`
    Path,
    /// Any other punctuation character (`{`, `}`, `,`, `*`, `$`, `(`, ...).
    Punct(char),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Splits `src` into tokens (comments and literals dropped).
pub fn tokenize(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut lx = Lexer {
        chars,
        i: 0,
        line: 1,
        out: Vec::new(),
    };
    lx.run();
    lx.out
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: usize,
    out: Vec<Token>,
}

impl Lexer {
    fn at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    /// Moves one character on, counting lines.
    fn bump(&mut self) {
        if self.at(0) == Some('\n') {
            self.line += 1;
        }
        self.i += 1;
    }

    fn push(&mut self, tok: Tok, line: usize) {
        self.out.push(Token { tok, line });
    }

    fn run(&mut self) {
        while let Some(c) = self.at(0) {
            let line = self.line;
            match c {
                '/' if self.at(1) == Some('/') => {
                    while self.at(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                '/' if self.at(1) == Some('*') => self.block_comment(),
                '"' => self.quoted('"'),
                '\'' => self.quote_or_lifetime(),
                ':' if self.at(1) == Some(':') => {
                    self.i += 2;
                    self.push(Tok::Path, line);
                }
                c if is_ident_start(c) || c.is_ascii_digit() => self.word(),
                c if c.is_whitespace() => self.bump(),
                c => {
                    self.bump();
                    self.push(Tok::Punct(c), line);
                }
            }
        }
    }

    /// `/* ... */`, nested.
    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.at(0) {
            if c == '/' && self.at(1) == Some('*') {
                depth += 1;
                self.i += 2;
            } else if c == '*' && self.at(1) == Some('/') {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.bump();
            }
        }
    }

    /// A literal closed by `close`, with backslash escapes; we are on the opening quote.
    fn quoted(&mut self, close: char) {
        self.bump();
        while let Some(c) = self.at(0) {
            self.bump();
            if c == '\\' {
                self.bump();
            } else if c == close {
                return;
            }
        }
    }

    /// `r"..."`, `r#"..."#`: we are on the first `#` or the quote.
    fn raw_string(&mut self) {
        let mut hashes = 0;
        while self.at(0) == Some('#') {
            hashes += 1;
            self.i += 1;
        }
        self.bump(); // the opening quote
        while let Some(c) = self.at(0) {
            self.bump();
            if c == '"' && (0..hashes).all(|k| self.at(k) == Some('#')) {
                self.i += hashes;
                return;
            }
        }
    }

    /// `'x'`, `'\n'` (char literals) or `'a` (a lifetime or label): both are dropped.
    fn quote_or_lifetime(&mut self) {
        if self.at(1) == Some('\\') || self.at(2) == Some('\'') {
            self.quoted('\'');
        } else {
            self.i += 1;
            while self.at(0).is_some_and(is_ident_char) {
                self.i += 1;
            }
        }
    }

    /// An identifier, a number, a raw identifier, or the prefix of a string literal.
    fn word(&mut self) {
        let line = self.line;
        let start = self.i;
        while self.at(0).is_some_and(is_ident_char) {
            self.i += 1;
        }
        let word: String = self.chars[start..self.i].iter().collect();
        let next = self.at(0);
        let raw_quote = next == Some('"')
            || (next == Some('#') && {
                let mut k = 0;
                while self.at(k) == Some('#') {
                    k += 1;
                }
                self.at(k) == Some('"')
            });
        match word.as_str() {
            "r" | "br" | "cr" if raw_quote => self.raw_string(),
            "b" | "c" if next == Some('"') => self.quoted('"'),
            "b" if next == Some('\'') => self.quoted('\''),
            "r" if next == Some('#') && self.at(1).is_some_and(is_ident_start) => {
                self.i += 1;
                let start = self.i;
                while self.at(0).is_some_and(is_ident_char) {
                    self.i += 1;
                }
                let name = self.chars[start..self.i].iter().collect();
                self.push(Tok::Ident(name), line);
            }
            _ => self.push(Tok::Ident(word), line),
        }
    }
}
