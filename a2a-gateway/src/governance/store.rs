//! Where governance settings live: policies and PII rules behind
//! [`GovDocStore`](crate::store::backend::GovDocStore) (SQLite or PostgreSQL, [`GovDocs`]),
//! kills with the approvals behind [`HoldStore`](crate::store::backend::HoldStore). Both are
//! defined in the store; this module names them for governance's readers.
//!
//! Documents are kept as the JSON text the admin API validated; the traits have no database
//! types.

pub use crate::store::backend::{GovDocStore, GovDocs, Kill, PgGovDocs, SqliteGovDocs};
