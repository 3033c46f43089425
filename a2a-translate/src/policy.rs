//! Where the spec leaves a choice: refuse (strict, the default) or do what the official SDKs do.

/// How to translate values the spec leaves open.
///
/// | case | `Strict` (default) | `SdkCompatible` |
/// |---|---|---|
/// | 1.0 text/data part `mediaType` or `filename` -> 0.3 | refuse | drop (a2a-python, a2a-js) |
/// | 0.3 request `metadata` on get/resubscribe/push ops -> 1.0 | refuse | drop |
/// | 1.0 `tenant` -> 0.3 | refuse | drop |
/// | 0.3 push `schemes` with 0 or several entries -> 1.0 | refuse | first entry (or none) |
/// | 1.0 `historyLength: 0` (no history) -> 0.3 (where `0` means no limit) | refuse | drop |
/// | 1.0 push-config list paging (`pageSize`, `pageToken`, `nextPageToken`) -> 0.3 | refuse | drop |
/// | 1.0 `ROLE_UNSPECIFIED` -> 0.3 | refuse | `agent` |
/// | 1.0 task without `contextId` -> 0.3 | refuse | `""` |
/// | 0.3 OAuth scheme with several flows -> 1.0 card | scheme left out (listed) | keep the flow the SDK keeps (listed) |
///
/// Conventions that are not a choice are followed under both policies: a non-object 1.0
/// `data` value travels in 0.3 as `{"value": X}` with `metadata.data_part_compat = true`,
/// and translated cards lose their signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Refuse whatever the target cannot carry exactly.
    #[default]
    Strict,
    /// Drop or pick like the official SDKs (`a2a-python` `compat/v0_3/conversions.py`).
    SdkCompatible,
}

impl Policy {
    /// True for [`Policy::Strict`].
    pub fn is_strict(self) -> bool {
        self == Policy::Strict
    }
}
