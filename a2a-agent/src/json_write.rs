//! Compact JSON text of a value, byte for byte what `serde_json::to_string` writes, in fewer
//! instructions for the A2A types: a [`serde::Serializer`] into a `String` that copies each
//! string needing no escape in one piece (checked eight bytes at a time, as the byte counter
//! [`crate::json_size`] checks them) and writes a struct's field names without the general map
//! key path.
//!
//! Why not `serde_json::to_writer`: it escapes strings byte by byte and writes every struct
//! field name through its map-key serializer; the answer to an echo send (a task of about 500
//! bytes) cost about 11 k instructions that way, the largest single step of the request
//! (docs/benchmarks.md, "Fewer instructions per echo request").
//!
//! Exactness: whatever this writer does not write the way `serde_json` does by construction is
//! handed to `serde_json` itself: a string that needs an escape and a float are written by
//! `serde_json` in place; anything else unusual (bytes, a map key that is not a string,
//! serde_json's private `RawValue` token, an error of the value's own `Serialize`) makes
//! [`to_string`] start again with `serde_json::to_string`, so the text, or the error, is always
//! `serde_json`'s. A proptest checks the two on generated tasks and events.

use std::fmt::Write as _;

use serde::ser::{self, Serialize};

/// `value` as compact JSON text, exactly as `serde_json::to_string(value)` gives it, in a
/// buffer of at least `capacity` bytes.
pub(crate) fn to_string<T: Serialize + ?Sized>(
    value: &T,
    capacity: usize,
) -> serde_json::Result<String> {
    let mut w = Writer(String::with_capacity(capacity));
    match value.serialize(&mut w) {
        Ok(()) => Ok(w.0),
        Err(Refused) => serde_json::to_string(value),
    }
}

/// A JSON tree's compact text, as its `Display` (and `serde_json::to_string`) writes it: the
/// form a stream event takes, keys in the tree's order.
pub(crate) fn value_text(value: &serde_json::Value) -> String {
    to_string(value, 256).unwrap_or_else(|_| value.to_string())
}

/// Whether `serde_json` escapes any byte of `b` (a control character, `"` or `\`), checked
/// eight bytes at a time.
fn needs_escape(b: &[u8]) -> bool {
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        if crate::json_size::word_needs_escape(u64::from_le_bytes(a)) {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&c| c < 0x20 || c == b'"' || c == b'\\')
}

/// The text written so far.
struct Writer(String);

/// What this writer leaves to `serde_json` (see the module doc).
#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("left to serde_json")
    }
}
impl std::error::Error for Refused {}
impl ser::Error for Refused {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Refused
    }
}

/// The token `serde_json` gives the struct a `RawValue` serialises as (and its other private
/// ones): written as they are by `serde_json` only.
const SERDE_JSON_PRIVATE: &str = "$serde_json::private::";

impl Writer {
    /// `s` as a JSON string: one copy when no byte needs an escape, else `serde_json`'s own.
    fn string(&mut self, s: &str) -> Result<(), Refused> {
        if needs_escape(s.as_bytes()) {
            let text = serde_json::to_string(s).map_err(|_| Refused)?;
            self.0.push_str(&text);
        } else {
            self.0.push('"');
            self.0.push_str(s);
            self.0.push('"');
        }
        Ok(())
    }

    /// A number or other scalar as `serde_json` writes it.
    fn scalar(&mut self, v: impl Serialize) -> Result<(), Refused> {
        let text = serde_json::to_string(&v).map_err(|_| Refused)?;
        self.0.push_str(&text);
        Ok(())
    }

    fn integer(&mut self, v: impl std::fmt::Display) -> Result<(), Refused> {
        // Decimal digits, as serde_json's `itoa` writes them.
        write!(self.0, "{v}").map_err(|_| Refused)
    }

    fn open(&mut self, bracket: char, close: &'static str) -> Compound<'_> {
        self.0.push(bracket);
        Compound {
            w: self,
            first: true,
            close,
        }
    }

    /// `{"variant":` before an enum variant's content.
    fn variant(&mut self, variant: &str) -> Result<(), Refused> {
        self.0.push('{');
        self.string(variant)?;
        self.0.push(':');
        Ok(())
    }
}

/// An array or object being written: `first` until its first element; `close` ends it (with
/// the `}` of an enum variant's wrapping object where there is one).
struct Compound<'a> {
    w: &'a mut Writer,
    first: bool,
    close: &'static str,
}

impl Compound<'_> {
    fn comma(&mut self) {
        if !self.first {
            self.w.0.push(',');
        }
        self.first = false;
    }
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Refused> {
        self.comma();
        v.serialize(&mut *self.w)
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, v: &T) -> Result<(), Refused> {
        self.comma();
        self.w.string(key)?;
        self.w.0.push(':');
        v.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Refused> {
        self.w.0.push_str(self.close);
        Ok(())
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Refused> {
        self.0.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Refused> {
        self.integer(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Refused> {
        self.scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Refused> {
        self.scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Refused> {
        self.string(v.encode_utf8(&mut [0u8; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Refused> {
        self.string(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Refused> {
        Err(Refused)
    }
    fn serialize_none(self) -> Result<(), Refused> {
        self.0.push_str("null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Refused> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Refused> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Refused> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Refused> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<(), Refused> {
        if name.starts_with(SERDE_JSON_PRIVATE) {
            return Err(Refused);
        }
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Refused> {
        self.variant(variant)?;
        v.serialize(&mut *self)?;
        self.0.push('}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Refused> {
        Ok(self.open('[', "]"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Refused> {
        Ok(self.open('[', "]"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Refused> {
        Ok(self.open('[', "]"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Refused> {
        self.variant(variant)?;
        Ok(self.open('[', "]}"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Refused> {
        Ok(self.open('{', "}"))
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Compound<'a>, Refused> {
        if name.starts_with(SERDE_JSON_PRIVATE) {
            return Err(Refused);
        }
        Ok(self.open('{', "}"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Refused> {
        self.variant(variant)?;
        Ok(self.open('{', "}}"))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Refused> {
        self.element(v)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Refused> {
        self.element(v)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Refused> {
        self.element(v)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Refused> {
        self.element(v)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Refused> {
        self.comma();
        let at = self.w.0.len();
        key.serialize(&mut *self.w)?;
        // A key that is written as a JSON string is written as serde_json writes it; any other
        // (a number, a bool, ...) serde_json quotes or refuses: left to it.
        if !self.w.0[at..].starts_with('"') {
            return Err(Refused);
        }
        self.w.0.push(':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Refused> {
        v.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Refused> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Refused> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Refused> {
        Compound::end(self)
    }
}

#[cfg(test)]
mod tests;
