//! JSON paths for refusals, built on the stack and rendered only when a refusal happens.

use std::fmt::{self, Write as _};

/// A location inside the document being translated, e.g. `params.message.parts[0].filename`.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The document itself.
    Root,
    /// A member of an object.
    Field(&'a Path<'a>, &'static str),
    /// An element of an array.
    Index(&'a Path<'a>, usize),
    /// A member of a map, named by data (e.g. a security scheme name).
    Key(&'a Path<'a>, &'a str),
}

impl<'a> Path<'a> {
    /// `self.name`.
    pub(crate) fn field(&'a self, name: &'static str) -> Path<'a> {
        Path::Field(self, name)
    }

    /// `self[i]`.
    pub(crate) fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    /// `self.key` for a data-named member.
    pub(crate) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Field(p, name) => {
                p.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Key(p, name) => {
                p.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Index(p, i) => {
                p.write(out);
                let _ = write!(out, "[{i}]");
            }
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn renders_dotted_paths_with_indexes() {
        let root = Path::Root;
        let params = root.field("params");
        let msg = params.field("message");
        let parts = msg.field("parts");
        let p0 = parts.index(0);
        let f = p0.field("filename");
        assert_eq!(f.to_string(), "params.message.parts[0].filename");
        let top = root.field("tenant");
        assert_eq!(top.to_string(), "tenant");
        let schemes = root.field("securitySchemes");
        assert_eq!(schemes.key("oauth").to_string(), "securitySchemes.oauth");
        assert_eq!(root.to_string(), "");
    }
}
