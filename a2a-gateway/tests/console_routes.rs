//! Every admin route has a console page (issue 35): the admin router's routes, read from the
//! `.route(...)` calls in `src/admin/`, against the table in docs/console.md ("Every admin route
//! has a console page"), whose pages must be console routes (read from `src/console/`). A new
//! admin route without a row fails here.

use std::collections::BTreeSet;
use std::path::Path;

/// `METHOD path` of every admin route, read from the `.route("...", get(..).post(..))` calls
/// in `src/admin/`.
fn admin_routes() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/admin");
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            for (path, methods) in routes_in(&std::fs::read_to_string(&path).unwrap()) {
                for m in methods {
                    out.insert(format!("{m} {path}"));
                }
            }
        }
    }
    out
}

/// The console router's paths, read from `src/console/` (every `.route("/console...")`).
fn console_routes() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/console");
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.extend(
                    routes_in(&std::fs::read_to_string(&p).unwrap())
                        .into_iter()
                        .map(|(path, _)| path),
                );
            }
        }
    }
    out
}

/// `(path, methods)` of each `.route(` call in `src`: the string literal, then the method
/// routers (`get`, `post`, `put`, `patch`, `delete`) named up to the call's closing parenthesis.
fn routes_in(src: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(at) = rest.find(".route(") {
        rest = &rest[at + ".route(".len()..];
        let Some(open) = rest.find('"') else { break };
        if !rest[..open].trim().is_empty() {
            continue;
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else { break };
        let path = after[..close].to_owned();
        // The handler expression: up to the parenthesis that closes `.route(`.
        let body = &after[close + 1..];
        let mut depth = 1;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let handler = &body[..end];
        let mut methods = Vec::new();
        for m in ["get", "post", "put", "patch", "delete"] {
            let hit = handler.match_indices(&format!("{m}(")).any(|(i, _)| {
                i == 0
                    || !handler.as_bytes()[i - 1].is_ascii_alphanumeric()
                        && handler.as_bytes()[i - 1] != b'_'
            });
            if hit {
                methods.push(m.to_ascii_uppercase());
            }
        }
        out.push((path, methods));
    }
    out
}

/// The rows of docs/console.md's "Every admin route has a console page" table:
/// (admin route, the console path named first in the page cell).
fn documented() -> Vec<(String, String)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/console.md"))
            .unwrap();
    let at = doc
        .find("### Every admin route has a console page")
        .expect("the coverage section in docs/console.md");
    let mut rows = Vec::new();
    for line in doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with("| admin route"))
        .skip(2)
    {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let route = cells[1].trim_matches('`').to_owned();
        let page = cells[2].split('`').nth(1).unwrap_or_default().to_owned();
        rows.push((route, page));
    }
    rows
}

#[test]
fn every_admin_route_has_a_console_page() {
    let routes = admin_routes();
    // The parser reads what it should: a few known routes, and many of them.
    for known in [
        "GET /admin/workspaces",
        "PUT /admin/workspaces/{ws}/policy",
        "POST /admin/workspaces/{ws}/policy:explain",
        "POST /admin/signing-keys/{kid}/retire",
        "PATCH /admin/workspaces/{ws}/settings",
    ] {
        assert!(
            routes.contains(known),
            "{known} not read from src/admin: {routes:?}"
        );
    }
    assert!(routes.len() >= 30, "{routes:?}");
    let console = console_routes();
    assert!(
        console.contains("/console/workspaces/{ws}/policy"),
        "{console:?}"
    );
    let rows = documented();
    let listed: BTreeSet<String> = rows.iter().map(|(r, _)| r.clone()).collect();
    let missing: Vec<&String> = routes.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "admin routes without a console page in docs/console.md (\"Every admin route has a \
         console page\"): {missing:?}"
    );
    let stale: Vec<&String> = listed.difference(&routes).collect();
    assert!(
        stale.is_empty(),
        "rows for admin routes that do not exist: {stale:?}"
    );
    for (route, page) in &rows {
        assert!(
            console.contains(page),
            "{route}: its console page {page:?} is not a console route"
        );
    }
}

#[test]
fn the_route_reader_reads_methods_and_nesting() {
    let src = r#"Router::new().route("/a", get(x).post(y)).route(
        "/b/{id}",
        delete(handlers::forget_it),
    ).route("/c", post(wrap(get_all)))"#;
    assert_eq!(
        routes_in(src),
        vec![
            ("/a".to_owned(), vec!["GET".to_owned(), "POST".to_owned()]),
            ("/b/{id}".to_owned(), vec!["DELETE".to_owned()]),
            ("/c".to_owned(), vec!["POST".to_owned()]),
        ]
    );
}
