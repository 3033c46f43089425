//! The hop's request in its two forms: as the caller wrote it (validated once, member names
//! normalised) and in A2A 1.0, made from it once. Governance, the approval hold, the idempotency
//! digest and a 1.0 peer's request read the 1.0 form; the caller's form serves the checks that
//! speak the caller's version (ownership, webhooks, sealing, paging, history lengths) and a peer
//! of the caller's version. A 1.0 caller's request is its own 1.0 form: nothing is translated.

use serde_json::Value;

use crate::protocol::errors::{Refusal, Version};
use crate::protocol::ops::Operation;
use crate::protocol::xlate;

/// The request of one hop (see the module docs).
pub(crate) struct Forms {
    op: Operation,
    caller: Version,
    params: Value,
    /// A 0.3 caller's request in 1.0, once asked for; `None` again after an edit of the
    /// caller's form.
    v1: Option<Value>,
}

impl Forms {
    /// `params` in `caller`'s version, already validated.
    pub(crate) fn new(op: Operation, caller: Version, params: Value) -> Forms {
        Forms {
            op,
            caller,
            params,
            v1: None,
        }
    }

    /// The caller's form.
    pub(crate) fn caller(&self) -> &Value {
        &self.params
    }

    /// The caller's form, to edit (the 1.0 form is made again when next asked for).
    pub(crate) fn caller_mut(&mut self) -> &mut Value {
        self.v1 = None;
        &mut self.params
    }

    /// The 1.0 form.
    pub(crate) fn v1(&mut self) -> Result<&mut Value, Refusal> {
        if self.caller == Version::V1 {
            return Ok(&mut self.params);
        }
        let v1 = match self.v1.take() {
            Some(v) => v,
            None => xlate::translate_request(self.op, self.caller, Version::V1, &self.params)?,
        };
        Ok(self.v1.insert(v1))
    }

    /// After an edit of the 1.0 form (governance redacting a value): a 0.3 caller's form is
    /// written again from it, so both say the same. What 0.3 cannot carry is refused.
    pub(crate) fn v1_edited(&mut self) -> Result<(), Refusal> {
        if let (Version::V03, Some(v1)) = (self.caller, &self.v1) {
            self.params = xlate::translate_request(self.op, Version::V1, Version::V03, v1)?;
        }
        Ok(())
    }

    /// The request in the peer's version `to`: the caller's form for a peer of the caller's
    /// version, the 1.0 form for a 1.0 peer, and a 1.0 caller's request put into 0.3.
    pub(crate) fn for_peer(&mut self, to: Version) -> Result<Value, Refusal> {
        if to == self.caller {
            return Ok(self.params.clone());
        }
        match to {
            Version::V1 => Ok(self.v1()?.clone()),
            Version::V03 => xlate::translate_request(self.op, self.caller, to, &self.params),
        }
    }

    /// The caller's form, taken.
    pub(crate) fn into_caller(self) -> Value {
        self.params
    }
}
