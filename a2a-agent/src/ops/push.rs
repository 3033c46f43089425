//! The four push notification config operations in 1.0 terms (create, get, list, delete), on
//! the agent's push [`Dispatcher`](crate::push::Dispatcher), for the caller's own tasks.

use base64::Engine;
use serde_json::Value;

use a2a_types::v1::{
    DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
};

use crate::caller::CallerProfile;
use crate::edge::version::Version;
use crate::error::{A2aError, ErrorKind};
use crate::push::store::PushRecord;
use crate::state::App;

fn store_err(e: impl std::fmt::Display) -> A2aError {
    A2aError::internal(e.to_string())
}

fn config_not_found(id: &str) -> A2aError {
    // The Camel guide's table: a missing push config is a TaskNotFoundError (404 / -32001).
    A2aError::new(
        ErrorKind::TaskNotFound,
        format!("push notification config {id:?} not found"),
    )
}

const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: i32 = 100;

fn parse<T: serde::de::DeserializeOwned>(params: Value, what: &str) -> Result<T, A2aError> {
    T::deserialize(&params).map_err(|e| A2aError::invalid_as::<T>(what, &params, e))
}

fn ser(v: impl serde::Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(v).map_err(|e| A2aError::internal(e.to_string()))
}

/// Run one of the four 1.0 push config methods of a caller of `version`. The caller must own
/// the task (a foreign task is a TaskNotFound, like a missing one; 403 in the Camel table).
pub(crate) async fn op(
    app: &App,
    caller: &CallerProfile,
    method: &str,
    params: Value,
    version: Version,
) -> Result<Value, A2aError> {
    let Some(d) = app.push.as_ref().filter(|_| app.card.push_notifications()) else {
        return Err(app.cfg().rest_status_table.push_not_supported());
    };
    let owned = |task_id: String| async move {
        if task_id.is_empty() {
            return Err(A2aError::invalid_params("missing parameter \"taskId\"")
                .with_meta("field", "taskId"));
        }
        app.manager.get(&task_id, Some(0), caller).await?;
        Ok::<String, A2aError>(task_id)
    };
    match method {
        "CreateTaskPushNotificationConfig" => {
            let c: TaskPushNotificationConfig = parse(params, "TaskPushNotificationConfig")?;
            let task_id = owned(c.task_id.clone().unwrap_or_default()).await?;
            let c = d.prepare(c, &task_id, version).await?;
            // Marked before the put: an event racing with the creation may find the config.
            d.mark(&task_id);
            d.store()
                .put(PushRecord {
                    config: c.clone(),
                    version,
                    owner: caller.owner_key(),
                })
                .await
                .map_err(store_err)?;
            ser(c)
        }
        "GetTaskPushNotificationConfig" => {
            let r: GetTaskPushNotificationConfigRequest =
                parse(params, "GetTaskPushNotificationConfigRequest")?;
            let task_id = owned(r.task_id).await?;
            let all = d.store().list(&task_id).await.map_err(store_err)?;
            // 0.3 allows omitting the config id: the task's first config.
            let found = if r.id.is_empty() {
                all.into_iter().next()
            } else {
                all.into_iter().find(|x| x.id() == r.id)
            };
            match found {
                Some(x) => ser(x.config),
                None => Err(config_not_found(&r.id)),
            }
        }
        "ListTaskPushNotificationConfigs" => {
            let r: ListTaskPushNotificationConfigsRequest =
                parse(params, "ListTaskPushNotificationConfigsRequest")?;
            let size = match r.page_size {
                None | Some(0) => DEFAULT_PAGE,
                Some(n) if (1..=MAX_PAGE).contains(&n) => n as usize,
                Some(_) => {
                    return Err(A2aError::invalid_params(format!(
                        "pageSize must be between 1 and {MAX_PAGE} inclusive"
                    ))
                    .with_meta("field", "pageSize"));
                }
            };
            let task_id = owned(r.task_id).await?;
            let all = d.store().list(&task_id).await.map_err(store_err)?;
            let start = match r.page_token.as_deref().filter(|t| !t.is_empty()) {
                None => 0,
                Some(t) => decode_token(&task_id, t)?,
            };
            let end = (start + size).min(all.len());
            let configs: Vec<TaskPushNotificationConfig> = all
                .get(start.min(end)..end)
                .unwrap_or_default()
                .iter()
                .map(|x| x.config.clone())
                .collect();
            let next = (end < all.len()).then(|| encode_token(&task_id, end));
            ser(ListTaskPushNotificationConfigsResponse {
                configs,
                next_page_token: next,
            })
        }
        "DeleteTaskPushNotificationConfig" => {
            let r: DeleteTaskPushNotificationConfigRequest =
                parse(params, "DeleteTaskPushNotificationConfigRequest")?;
            let task_id = owned(r.task_id).await?;
            // Events the task emitted before this delete were queued for the config when they
            // happened, and are still delivered.
            if !d.store().delete(&task_id, &r.id).await.map_err(store_err)? {
                return Err(config_not_found(&r.id));
            }
            Ok(serde_json::json!({}))
        }
        other => Err(A2aError::new(
            ErrorKind::MethodNotFound,
            format!("Method not found: {other}"),
        )),
    }
}

fn encode_token(task_id: &str, offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{task_id}\n{offset}"))
}

fn decode_token(task_id: &str, token: &str) -> Result<usize, A2aError> {
    let bad = || {
        A2aError::invalid_params("invalid pageToken: send back nextPageToken unchanged")
            .with_meta("field", "pageToken")
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let s = String::from_utf8(raw).map_err(|_| bad())?;
    let (t, o) = s.split_once('\n').ok_or_else(bad)?;
    if t != task_id {
        return Err(bad());
    }
    o.parse().map_err(|_| bad())
}
