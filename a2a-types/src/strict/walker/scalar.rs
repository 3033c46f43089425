//! Arrays, strings and numbers: `items`/`minItems`, string formats and integer ranges.

use serde_json::{Map, Value};

use super::Walker;
use super::names::push_index;
use crate::strict::ViolationKind;

impl<'a> Walker<'a> {
    pub(super) fn check_array(
        &mut self,
        s: &'a Map<String, Value>,
        a: &[Value],
        path: &mut String,
        depth: usize,
    ) {
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && (a.len() as u64) < min
        {
            self.violation(path, ViolationKind::TooFewItems { min });
        }
        if let Some(items) = s.get("items") {
            for (i, item) in a.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                self.check(items, item, path, depth + 1);
                path.truncate(len);
            }
        }
    }

    pub(super) fn check_string(&mut self, s: &Map<String, Value>, st: &str, path: &str) {
        let Some(fmt) = s.get("format").and_then(Value::as_str) else {
            return;
        };
        match fmt {
            "byte" => {
                if let Err(e) = crate::binary::check(st) {
                    self.violation(
                        path,
                        ViolationKind::BadFormat {
                            format: "base64".into(),
                            detail: e.reason,
                        },
                    );
                }
            }
            "date-time" => match crate::timestamp::Timestamp::parse(st) {
                Err(e) => self.violation(
                    path,
                    ViolationKind::BadFormat {
                        format: "timestamp".into(),
                        detail: e.reason.into(),
                    },
                ),
                Ok(t) => {
                    if self.opts.require_utc_timestamps && t.as_str() != st {
                        self.violation(
                            path,
                            ViolationKind::BadFormat {
                                format: "timestamp".into(),
                                detail: format!("must be RFC 3339 UTC with Z (e.g. {t})"),
                            },
                        );
                    }
                }
            },
            _ => {}
        }
    }

    pub(super) fn check_number(
        &mut self,
        s: &Map<String, Value>,
        n: &serde_json::Number,
        path: &str,
    ) {
        let Some(fmt) = s.get("format").and_then(Value::as_str) else {
            return;
        };
        let (lo, hi): (i128, i128) = match fmt {
            "int8" => (i8::MIN.into(), i8::MAX.into()),
            "int16" => (i16::MIN.into(), i16::MAX.into()),
            "int32" => (i32::MIN.into(), i32::MAX.into()),
            "int64" => (i64::MIN.into(), i64::MAX.into()),
            "uint8" => (0, u8::MAX.into()),
            "uint16" => (0, u16::MAX.into()),
            "uint32" => (0, u32::MAX.into()),
            "uint64" | "uint" => (0, u64::MAX.into()),
            _ => return,
        };
        let x: Option<i128> = n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i128));
        if x.is_none_or(|x| x < lo || x > hi) {
            self.violation(
                path,
                ViolationKind::BadFormat {
                    format: fmt.into(),
                    detail: format!("{n} is out of range"),
                },
            );
        }
    }
}
