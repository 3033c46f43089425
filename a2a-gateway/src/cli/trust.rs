//! `a2a-gateway admin ...` commands of trust (on the SQLite file; a running gateway signs with
//! a new key at its next card request).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::config::Config;
use crate::{store::Store, store::StoreError};
use crate::{trust::own, trust::store as ts};

/// Where the secret that seals private signing keys comes from.
#[derive(Args, Debug, Clone)]
pub struct SecretArgs {
    /// Secret (at least 32 bytes) that encrypts signing keys at rest; the same value the
    /// gateway is served with.
    #[arg(long, env = "A2A_GATEWAY_CARD_KEY_SECRET", hide_env_values = true)]
    pub card_key_secret: Option<String>,
    /// File holding that secret (used when --card-key-secret is not given).
    #[arg(long, env = "A2A_GATEWAY_CARD_KEY_FILE")]
    pub card_key_file: Option<PathBuf>,
}

impl SecretArgs {
    fn seal(&self) -> Result<Option<own::SealKey>, String> {
        own::SealKey::from_config(&Config {
            card_key_secret: self.card_key_secret.clone(),
            card_key_file: self.card_key_file.clone(),
            ..Config::default()
        })
    }
}

/// Trust commands.
#[derive(Subcommand, Debug, Clone)]
pub enum TrustCmd {
    /// Make a card signing key (ES256). The newest active key signs every governed card; the
    /// private key is stored encrypted and never shown. Prints the key's public part.
    SigningKeyCreate(SecretArgs),
    /// Make a new card signing key and retire every other active key (they stay in
    /// /a2a/.well-known/jwks.json for signing_key_grace, 30 days by default).
    SigningKeyRotate(SecretArgs),
    /// List card signing keys (public parts, active or retired).
    SigningKeyList,
    /// Retire a card signing key (it stays in the key set for the grace period).
    SigningKeyRetire {
        /// Key id.
        kid: String,
    },
    /// Require verified peer card signatures in a workspace (or leave it to the fleet setting,
    /// require_signed_cards).
    CardTrust {
        /// Workspace id.
        workspace: String,
        /// true, false, or unset (the fleet setting decides).
        #[arg(long, value_parser = ["true", "false", "unset"])]
        require_signed_cards: String,
    },
}

fn text(e: StoreError) -> String {
    e.to_string()
}

/// Runs a trust command; returns what to print (JSON).
pub fn run(store: &Store, cmd: TrustCmd) -> Result<serde_json::Value, String> {
    match cmd {
        TrustCmd::SigningKeyCreate(s) => {
            to_json(&own::create_key(store, s.seal()?.as_ref(), false).map_err(text)?)
        }
        TrustCmd::SigningKeyRotate(s) => {
            to_json(&own::create_key(store, s.seal()?.as_ref(), true).map_err(text)?)
        }
        TrustCmd::SigningKeyList => to_json(&ts::list_keys(store).map_err(text)?),
        TrustCmd::SigningKeyRetire { kid } => {
            ts::retire_key(store, &kid).map_err(text)?;
            to_json(&ts::list_keys(store).map_err(text)?)
        }
        TrustCmd::CardTrust {
            workspace,
            require_signed_cards,
        } => {
            let on = match require_signed_cards.as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            };
            ts::set_require_signed(store, &workspace, on).map_err(text)?;
            Ok(serde_json::json!({"workspace": workspace, "requireSignedCards": on}))
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}
