//! Console test helpers: a logged-in session over plain HTTP (cookie and CSRF token).

use super::{ADMIN, Env};
use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `name=value` of the `Set-Cookie` named `name`, and the whole header.
pub fn set_cookie(resp: &reqwest::Response, name: &str) -> Option<(String, String)> {
    resp.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| (v.split(';').next().unwrap().to_owned(), v.to_owned()))
}

/// `name=value` and the whole header of the session cookie: `__Host-a2a_console` under https,
/// `a2a_console_<port>` on plain HTTP.
pub fn session_cookie(resp: &reqwest::Response) -> Option<(String, String)> {
    resp.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| {
            let name = v.split('=').next().unwrap_or("");
            name == "__Host-a2a_console"
                || name
                    .strip_prefix("a2a_console_")
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|v| (v.split(';').next().unwrap().to_owned(), v.to_owned()))
}

/// The value of the first `name="csrf"` hidden field.
pub fn csrf_of(html: &str) -> String {
    let at = html.find(r#"name="csrf" value=""#).expect("a CSRF field");
    let rest = &html[at + r#"name="csrf" value=""#.len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

pub struct Console {
    pub http: reqwest::Client,
    pub base: String,
    pub cookie: String,
    pub csrf: String,
}

impl Console {
    pub async fn get(&self, path: &str) -> (u16, String) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    pub async fn post(
        &self,
        path: &str,
        form: &[(&str, &str)],
        origin: Option<&str>,
    ) -> (u16, String) {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .form(form);
        if let Some(o) = origin {
            req = req.header(ORIGIN, o);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
}

/// Logs in with `token` through the login form; the session cookie on success.
pub async fn login_with(http: &reqwest::Client, base: &str, token: &str) -> (u16, Option<String>) {
    let form = http
        .get(format!("{base}/console/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 200);
    let (pre, _) = set_cookie(&form, "a2a_console_login").expect("login cookie");
    let csrf = csrf_of(&form.text().await.unwrap());
    let r = http
        .post(format!("{base}/console/login"))
        .header(COOKIE, &pre)
        .header(ORIGIN, base)
        .form(&[("csrf", csrf.as_str()), ("token", token)])
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), session_cookie(&r).map(|c| c.0))
}

pub async fn login(env: &Env) -> Console {
    let http = client();
    let base = env.gw.base_url();
    let (status, cookie) = login_with(&http, &base, ADMIN).await;
    assert_eq!(status, 303);
    let cookie = cookie.expect("session cookie");
    let r = http
        .get(format!("{base}/console"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let csrf = csrf_of(&r.text().await.unwrap());
    Console {
        http,
        base,
        cookie,
        csrf,
    }
}
