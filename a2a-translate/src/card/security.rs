//! Security schemes and requirements of an agent card, both directions.

use std::collections::BTreeSet;

use a2a_types::{v1, v03};

use super::{Omit, R};
use crate::error::Untranslatable;
use crate::path::Path;
use crate::policy::Policy;

pub(super) fn scheme_to_v03(s: v1::SecurityScheme) -> Result<v03::SecurityScheme, &'static str> {
    use v1::SecurityScheme as S;
    Ok(match s {
        S::ApiKeySecurityScheme(k) => v03::SecurityScheme::ApiKey(v03::ApiKeySecurityScheme {
            location: match k.location.as_str() {
                "header" => v03::ApiKeyLocation::Header,
                "query" => v03::ApiKeyLocation::Query,
                "cookie" => v03::ApiKeyLocation::Cookie,
                _ => return Err("A2A 0.3 apiKey location is header, query or cookie"),
            },
            name: k.name,
            description: k.description,
        }),
        S::HttpAuthSecurityScheme(h) => v03::SecurityScheme::Http(v03::HttpAuthSecurityScheme {
            scheme: h.scheme,
            bearer_format: h.bearer_format,
            description: h.description,
        }),
        S::Oauth2SecurityScheme(o) => {
            let mut flows = v03::OAuthFlows::default();
            match o.flows {
                v1::OAuthFlows::AuthorizationCode(f) => {
                    if f.pkce_required == Some(true) {
                        return Err("pkceRequired has no A2A 0.3 form");
                    }
                    flows.authorization_code = Some(v03::AuthorizationCodeOAuthFlow {
                        authorization_url: f.authorization_url,
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    });
                }
                v1::OAuthFlows::ClientCredentials(f) => {
                    flows.client_credentials = Some(v03::ClientCredentialsOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    });
                }
                v1::OAuthFlows::Implicit(f) => {
                    flows.implicit = Some(v03::ImplicitOAuthFlow {
                        authorization_url: f
                            .authorization_url
                            .ok_or("the A2A 0.3 implicit flow requires authorizationUrl")?,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    });
                }
                v1::OAuthFlows::Password(f) => {
                    flows.password = Some(v03::PasswordOAuthFlow {
                        token_url: f
                            .token_url
                            .ok_or("the A2A 0.3 password flow requires tokenUrl")?,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    });
                }
                v1::OAuthFlows::DeviceCode(_) => {
                    return Err("the deviceCode flow has no A2A 0.3 form");
                }
            }
            v03::SecurityScheme::OAuth2(v03::OAuth2SecurityScheme {
                flows,
                oauth2_metadata_url: o.oauth2_metadata_url,
                description: o.description,
            })
        }
        S::OpenIdConnectSecurityScheme(o) => {
            v03::SecurityScheme::OpenIdConnect(v03::OpenIdConnectSecurityScheme {
                open_id_connect_url: o.open_id_connect_url,
                description: o.description,
            })
        }
        S::MtlsSecurityScheme(m) => v03::SecurityScheme::MutualTls(v03::MutualTlsSecurityScheme {
            description: m.description,
        }),
    })
}

pub(super) fn requirements_to_v03(
    reqs: Vec<v1::SecurityRequirement>,
    dropped: &BTreeSet<String>,
    at: &Path<'_>,
    omit: &mut Omit,
) -> R<Option<Vec<v03::SecurityRequirement>>> {
    if reqs.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.into_iter().enumerate() {
        if let Some(name) = r.schemes.keys().find(|k| dropped.contains(*k)) {
            omit.push(
                &at.index(i),
                format!("names scheme {name:?}, which was left out"),
            );
            continue;
        }
        out.push(r.schemes.into_iter().map(|(k, v)| (k, v.list)).collect());
    }
    if out.is_empty() {
        return Err(Untranslatable::at(
            at,
            "every security requirement names a scheme without an A2A 0.3 form",
        ));
    }
    Ok(Some(out))
}

// ------------------------------------------------------------------------------- 0.3 -> 1.0

pub(super) fn scheme_to_v1(
    s: v03::SecurityScheme,
    policy: Policy,
    at: &Path<'_>,
    omit: &mut Omit,
) -> Result<v1::SecurityScheme, &'static str> {
    use v03::SecurityScheme as S;
    Ok(match s {
        S::ApiKey(k) => v1::SecurityScheme::ApiKeySecurityScheme(v1::ApiKeySecurityScheme {
            description: k.description,
            location: match k.location {
                v03::ApiKeyLocation::Header => "header",
                v03::ApiKeyLocation::Query => "query",
                v03::ApiKeyLocation::Cookie => "cookie",
            }
            .to_owned(),
            name: k.name,
        }),
        S::Http(h) => v1::SecurityScheme::HttpAuthSecurityScheme(v1::HttpAuthSecurityScheme {
            description: h.description,
            scheme: h.scheme,
            bearer_format: h.bearer_format,
        }),
        S::OAuth2(o) => {
            let f = o.flows;
            let mut all: Vec<(&'static str, v1::OAuthFlows)> = Vec::new();
            if let Some(f) = f.authorization_code {
                all.push((
                    "authorizationCode",
                    v1::OAuthFlows::AuthorizationCode(v1::AuthorizationCodeOAuthFlow {
                        authorization_url: f.authorization_url,
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                        pkce_required: None,
                    }),
                ));
            }
            if let Some(f) = f.client_credentials {
                all.push((
                    "clientCredentials",
                    v1::OAuthFlows::ClientCredentials(v1::ClientCredentialsOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    }),
                ));
            }
            if let Some(f) = f.implicit {
                all.push((
                    "implicit",
                    v1::OAuthFlows::Implicit(v1::ImplicitOAuthFlow {
                        authorization_url: Some(f.authorization_url),
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    }),
                ));
            }
            if let Some(f) = f.password {
                all.push((
                    "password",
                    v1::OAuthFlows::Password(v1::PasswordOAuthFlow {
                        token_url: Some(f.token_url),
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    }),
                ));
            }
            let flow = match all.len() {
                0 => {
                    return Err(
                        "an A2A 1.0 OAuth scheme needs exactly one flow; this one has none",
                    );
                }
                1 => all.pop().map(|(_, f)| f),
                _ if policy.is_strict() => {
                    return Err(
                        "an A2A 1.0 OAuth scheme holds exactly one flow; this one has several",
                    );
                }
                _ => {
                    // a2a-python sets each flow into the oneof in this order: the last one wins.
                    let kept = all.pop().map(|(_, f)| f);
                    let fp = at.field("flows");
                    for (name, _) in all {
                        omit.push(
                            &fp.field(name),
                            "an A2A 1.0 OAuth scheme holds exactly one flow",
                        );
                    }
                    kept
                }
            };
            let Some(flows) = flow else {
                return Err("an A2A 1.0 OAuth scheme needs exactly one flow");
            };
            v1::SecurityScheme::Oauth2SecurityScheme(v1::OAuth2SecurityScheme {
                description: o.description,
                flows,
                oauth2_metadata_url: o.oauth2_metadata_url,
            })
        }
        S::OpenIdConnect(o) => {
            v1::SecurityScheme::OpenIdConnectSecurityScheme(v1::OpenIdConnectSecurityScheme {
                description: o.description,
                open_id_connect_url: o.open_id_connect_url,
            })
        }
        S::MutualTls(m) => v1::SecurityScheme::MtlsSecurityScheme(v1::MutualTlsSecurityScheme {
            description: m.description,
        }),
    })
}

pub(super) fn requirements_to_v1(
    reqs: Vec<v03::SecurityRequirement>,
    dropped: &BTreeSet<String>,
    at: &Path<'_>,
    omit: &mut Omit,
) -> R<Vec<v1::SecurityRequirement>> {
    if reqs.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.into_iter().enumerate() {
        if let Some(name) = r.keys().find(|k| dropped.contains(*k)) {
            omit.push(
                &at.index(i),
                format!("names scheme {name:?}, which was left out"),
            );
            continue;
        }
        out.push(v1::SecurityRequirement {
            schemes: r
                .into_iter()
                .map(|(k, list)| (k, v1::StringList { list }))
                .collect(),
        });
    }
    if out.is_empty() {
        return Err(Untranslatable::at(
            at,
            "every security requirement names a scheme without an A2A 1.0 form",
        ));
    }
    Ok(out)
}
