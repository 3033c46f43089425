//! The length of a value's compact JSON text, counted without writing it: a [`serde::Serializer`]
//! that adds up what `serde_json::to_writer` would write.
//!
//! Exact for everything `serde_json` writes (strings with their escapes, integers, `null`,
//! booleans, maps, sequences, every enum form); a float is written once to a counter (rare in
//! tasks). Where `serde_json` would refuse a value (a map key that is not a string, a number, a
//! bool or a char), the counter counts it anyway: for such a value the count is an upper bound of
//! nothing, and `bounds::json_len` never relies on it (the A2A types never produce one).
//! The names the serde derive writes (struct fields, enum variants) are counted without an
//! escape scan: they are identifiers (see `name_len`).
//!
//! Why not `serde_json::to_writer` into a counting writer: the echo request path measured tasks
//! three times and events twice per request, which was 10 % of its instructions
//! (docs/benchmarks.md, "Where issue 11 stands"); this counter scans strings sixteen bytes at a
//! time and has no writer in between.

use serde::ser::{self, Serialize};

/// Bytes added to a string byte by its JSON escape: 1 for `"`, `\` and the short control
/// escapes (`\b \t \n \f \r`), 5 for the other control characters (`\u00XX`), 0 otherwise
/// (`serde_json` escapes nothing else).
const EXTRA: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 5;
        i += 1;
    }
    t[0x08] = 1;
    t[0x09] = 1;
    t[0x0A] = 1;
    t[0x0C] = 1;
    t[0x0D] = 1;
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t
};

fn extra_of(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .map(|b| usize::from(EXTRA[usize::from(*b)]))
        .sum()
}

/// Whether any byte of `block` is one `serde_json` escapes. Sixteen bytes with no branch: the
/// compiler makes this a few vector instructions (compare, or, mask).
fn block_needs_escape(block: &[u8; 16]) -> bool {
    let mut m = 0u8;
    for &c in block {
        m |= u8::from(c < 0x20) | u8::from(c == b'"') | u8::from(c == b'\\');
    }
    m != 0
}

/// The JSON length of the string `s`: its bytes, the escapes, the two quotes. Almost no string
/// has a byte to escape: it is looked for sixteen bytes at a time (a shorter string padded to
/// sixteen with a byte that needs none), the last block overlapping the one before, and a
/// string that has one is then counted byte by byte.
pub(crate) fn str_len(s: &str) -> usize {
    let b = s.as_bytes();
    let n = b.len() + 2;
    let escapes = if b.len() >= 16 {
        let last = b.len() - 16;
        let mut at = 0;
        loop {
            let start = at.min(last);
            if <&[u8; 16]>::try_from(&b[start..start + 16]).is_ok_and(block_needs_escape) {
                break true;
            }
            if start == last {
                break false;
            }
            at += 16;
        }
    } else {
        let mut block = [b'a'; 16];
        block[..b.len()].copy_from_slice(b);
        block_needs_escape(&block)
    };
    if escapes { n + extra_of(b) } else { n }
}

/// The JSON length of a name the serde derive gives (a struct field, an enum variant): a
/// `&'static str` that is a Rust identifier or a `rename` of the A2A types, none of which holds a
/// byte JSON escapes, so it is counted without the scan of [`str_len`] (a debug assertion checks
/// it). Most strings of a task are such names: scanning them was about half the counting.
fn name_len(s: &'static str) -> usize {
    debug_assert_eq!(
        str_len(s),
        s.len() + 2,
        "a serde name with a byte JSON escapes: {s:?}"
    );
    s.len() + 2
}

/// Decimal digits of `v`.
fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}

fn int_len(v: i64) -> usize {
    usize::from(v < 0) + digits(v.unsigned_abs())
}

struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A float as `serde_json` writes it (`null` when not finite).
fn float_len(v: impl Serialize) -> usize {
    let mut c = Counter(0);
    match serde_json::to_writer(&mut c, &v) {
        Ok(()) => c.0,
        Err(_) => 4,
    }
}

/// The JSON length of `v`, as `bounds::json_len` documents it.
pub(crate) fn len(v: &(impl Serialize + ?Sized)) -> usize {
    let mut n = Len(0);
    match v.serialize(&mut n) {
        Ok(()) => n.0,
        Err(Never) => 0,
    }
}

/// The counter. Its error never happens; it exists because serde asks for one.
struct Len(usize);

#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("json length")
    }
}
impl std::error::Error for Never {}
impl ser::Error for Never {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Never
    }
}

/// A compound being counted: `first` is false once an element was counted (the next one is
/// preceded by a comma).
struct Compound<'a> {
    n: &'a mut Len,
    first: bool,
    /// Closing bytes: `]` or `}`, plus `}` for an enum variant's wrapping object.
    close: usize,
}

impl Compound<'_> {
    fn comma(&mut self) {
        if !self.first {
            self.n.0 += 1;
        }
        self.first = false;
    }
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        self.comma();
        v.serialize(&mut *self.n)
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Never> {
        self.comma();
        self.n.0 += name_len(key) + 1;
        v.serialize(&mut *self.n)
    }
    fn end(self) -> Result<(), Never> {
        self.n.0 += self.close;
        Ok(())
    }
}

impl Len {
    fn open(&mut self, close: usize) -> Compound<'_> {
        self.0 += 1;
        Compound {
            n: self,
            first: true,
            close,
        }
    }
    /// `{"variant":` before an enum variant's content.
    fn variant(&mut self, variant: &'static str) {
        self.0 += 1 + name_len(variant) + 1;
    }
}

impl<'a> ser::Serializer for &'a mut Len {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Never> {
        self.0 += if v { 4 } else { 5 };
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Never> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Never> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Never> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Never> {
        self.0 += int_len(v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Never> {
        self.0 += v.to_string().len();
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Never> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Never> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Never> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Never> {
        self.0 += digits(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Never> {
        self.0 += v.to_string().len();
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Never> {
        self.0 += float_len(v);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Never> {
        self.0 += float_len(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Never> {
        self.serialize_str(v.encode_utf8(&mut [0u8; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Never> {
        self.0 += str_len(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Never> {
        // An array of numbers.
        let mut c = self.open(1);
        for b in v {
            c.element(b)?;
        }
        c.end()
    }
    fn serialize_none(self) -> Result<(), Never> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Never> {
        self.0 += 4;
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Never> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Never> {
        self.0 += name_len(v);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Never> {
        self.variant(variant);
        v.serialize(&mut *self)?;
        self.0 += 1;
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Never> {
        Ok(self.open(1))
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Never> {
        Ok(self.open(1))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Never> {
        Ok(self.open(1))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Never> {
        self.variant(variant);
        Ok(self.open(2))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Never> {
        Ok(self.open(1))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Never> {
        Ok(self.open(1))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Never> {
        self.variant(variant);
        Ok(self.open(2))
    }
}

macro_rules! seq_like {
    ($($tr:ident :: $m:ident),*) => {$(
        impl ser::$tr for Compound<'_> {
            type Ok = ();
            type Error = Never;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
                self.element(v)
            }
            fn end(self) -> Result<(), Never> {
                Compound::end(self)
            }
        }
    )*};
}
seq_like!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

macro_rules! struct_like {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Compound<'_> {
            type Ok = ();
            type Error = Never;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Never> {
                self.field(key, v)
            }
            fn end(self) -> Result<(), Never> {
                Compound::end(self)
            }
        }
    )*};
}
struct_like!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Never> {
        self.comma();
        key.serialize(KeyLen(&mut *self.n))?;
        self.n.0 += 1;
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Never> {
        v.serialize(&mut *self.n)
    }
    fn end(self) -> Result<(), Never> {
        Compound::end(self)
    }
}

/// A map key: `serde_json` writes strings as they are and numbers, booleans and chars quoted.
struct KeyLen<'a>(&'a mut Len);

impl KeyLen<'_> {
    /// `v` quoted.
    fn quoted(self, v: impl Serialize) -> Result<(), Never> {
        v.serialize(&mut *self.0)?;
        self.0.0 += 2;
        Ok(())
    }
}

impl<'a> ser::Serializer for KeyLen<'a> {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_str(self, v: &str) -> Result<(), Never> {
        self.0.serialize_str(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Never> {
        self.0.serialize_char(v)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Never> {
        self.0.serialize_str(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Never> {
        self.quoted(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Never> {
        self.quoted(v)
    }
    // serde_json refuses the keys below; they are counted as values (see the module docs).
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Never> {
        self.0.serialize_bytes(v)
    }
    fn serialize_none(self) -> Result<(), Never> {
        self.0.serialize_none()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Never> {
        self.0.serialize_some(v)
    }
    fn serialize_unit(self) -> Result<(), Never> {
        self.0.serialize_unit()
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<(), Never> {
        self.0.serialize_unit_struct(name)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        i: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Never> {
        self.0.serialize_newtype_variant(name, i, variant, v)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>, Never> {
        self.0.serialize_seq(len)
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Never> {
        self.0.serialize_tuple(len)
    }
    fn serialize_tuple_struct(self, n: &'static str, len: usize) -> Result<Compound<'a>, Never> {
        self.0.serialize_tuple_struct(n, len)
    }
    fn serialize_tuple_variant(
        self,
        n: &'static str,
        i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Never> {
        self.0.serialize_tuple_variant(n, i, variant, len)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, Never> {
        self.0.serialize_map(len)
    }
    fn serialize_struct(self, n: &'static str, len: usize) -> Result<Compound<'a>, Never> {
        self.0.serialize_struct(n, len)
    }
    fn serialize_struct_variant(
        self,
        n: &'static str,
        i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Never> {
        self.0.serialize_struct_variant(n, i, variant, len)
    }
}

#[cfg(test)]
mod tests;
