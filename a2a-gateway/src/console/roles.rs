//! Operators' roles in the console (docs/console.md, "Operators and roles"):
//!
//! - `viewer`: reads every page, changes nothing;
//! - `approver`: decides approvals in every workspace; `approver:{workspace}`: in that one;
//! - `admin`: everything (the admin token's login is `admin`).
//!
//! Every role reads every page. What a role may change is decided here once, from the request's
//! method and path ([`Roles::may_post`]), by the session check every console request passes,
//! and the pages ask the same functions to leave out the forms a role may not send.

use std::collections::BTreeSet;

/// The roles of one operator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    admin: bool,
    viewer: bool,
    approver_everywhere: bool,
    approver_of: BTreeSet<String>,
}

impl Roles {
    /// The admin token's roles.
    pub fn admin() -> Roles {
        Roles {
            admin: true,
            ..Roles::default()
        }
    }

    /// Reads roles from names (unknown names ignored): `admin`, `viewer`, `approver`,
    /// `approver:{workspace}`.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Roles {
        let mut r = Roles::default();
        for name in names {
            match name.trim() {
                "admin" => r.admin = true,
                "viewer" => r.viewer = true,
                "approver" => r.approver_everywhere = true,
                other => {
                    if let Some(ws) = other.strip_prefix("approver:").filter(|w| !w.is_empty()) {
                        r.approver_of.insert(ws.to_owned());
                    }
                }
            }
        }
        r
    }

    /// Reads the stored, space-separated form ([`Roles::stored`]).
    pub fn parse(stored: &str) -> Roles {
        Roles::from_names(stored.split_whitespace())
    }

    /// The space-separated form kept with the session.
    pub fn stored(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        if self.admin {
            names.push("admin".into());
        }
        if self.viewer {
            names.push("viewer".into());
        }
        if self.approver_everywhere {
            names.push("approver".into());
        }
        names.extend(self.approver_of.iter().map(|w| format!("approver:{w}")));
        names.join(" ")
    }

    /// Whether the operator has any console role at all (a login without one is refused).
    pub fn any(&self) -> bool {
        self.admin || self.viewer || self.approver_everywhere || !self.approver_of.is_empty()
    }

    /// Whether the operator may change everything.
    pub fn is_admin(&self) -> bool {
        self.admin
    }

    /// Whether the operator may decide approvals of workspace `ws`.
    pub fn may_approve(&self, ws: &str) -> bool {
        self.admin || self.approver_everywhere || self.approver_of.contains(ws)
    }

    /// Whether the operator may send the state-changing request `path` (a `POST` under
    /// `/console`): logging out always; an approval's decision
    /// (`/console/workspaces/{ws}/approvals/{id}/{action}`) with [`Roles::may_approve`];
    /// anything else only as `admin`.
    pub fn may_post(&self, path: &str) -> bool {
        if path == "/console/logout" {
            return true;
        }
        if let Some(ws) = decision_workspace(path) {
            return self.may_approve(ws);
        }
        self.admin
    }
}

/// The workspace of an approval decision's path, `None` for any other path.
fn decision_workspace(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/console/workspaces/")?;
    let mut seg = rest.split('/');
    let (ws, kind, id, action) = (seg.next()?, seg.next()?, seg.next()?, seg.next()?);
    (kind == "approvals" && !id.is_empty() && !action.is_empty() && seg.next().is_none())
        .then_some(ws)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_read_and_kept() {
        let r = Roles::from_names(["viewer", "approver:ws1", "approver:", "root", " admin "]);
        assert!(r.is_admin() && r.any());
        assert_eq!(Roles::parse(&r.stored()), r);
        assert!(!Roles::from_names(["root", "approver:"]).any());
    }

    #[test]
    fn what_each_role_may_change() {
        let decide = "/console/workspaces/ws1/approvals/ap-1/approve";
        let other_ws = "/console/workspaces/ws2/approvals/ap-2/deny";
        let change = "/console/workspaces/ws1/keys";
        let viewer = Roles::from_names(["viewer"]);
        assert!(!viewer.may_post(decide) && !viewer.may_post(change));
        assert!(viewer.may_post("/console/logout"));
        let approver = Roles::from_names(["approver:ws1"]);
        assert!(approver.may_post(decide));
        assert!(!approver.may_post(other_ws), "another workspace's approval");
        assert!(!approver.may_post(change));
        assert!(
            !approver.may_post("/console/workspaces/ws1/approvals/ap-1/approve/x"),
            "a longer path is not a decision"
        );
        let everywhere = Roles::from_names(["approver"]);
        assert!(everywhere.may_post(other_ws) && !everywhere.may_post(change));
        let admin = Roles::admin();
        assert!(admin.may_post(decide) && admin.may_post(change));
    }
}
