//! What every request shares and what the pipeline established for one: [`App`] (the card,
//! the configuration, the task manager, authentication, push) and [`Call`] (the caller, its
//! extensions and headers). The operations run on them; the server builds them.

use std::sync::Arc;

use http::HeaderMap;

use crate::auth::Authenticator;
use crate::caller::CallerProfile;
use crate::card::AgentCard;
use crate::config::AgentConfig;
use crate::push::Dispatcher;
use crate::tasks::TaskManager;

/// The running agent, shared by every request.
pub(crate) struct App {
    pub card: AgentCard,
    /// The settings; a reload replaces them ([`App::cfg`] reads them once per use).
    pub settings: arc_swap::ArcSwap<AgentConfig>,
    pub base: String,
    pub manager: Arc<TaskManager>,
    pub authenticator: Arc<dyn Authenticator>,
    #[cfg(feature = "prometheus")]
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    pub push: Option<Arc<Dispatcher>>,
    pub extended_card: Option<AgentCard>,
    /// `Last-Modified` of the card (the server's start: the card does not change while it runs).
    pub card_modified: String,
    /// Credential headers hidden from handlers besides [`HIDDEN_HEADERS`](crate::handler::HIDDEN_HEADERS).
    pub hidden_headers: Arc<Vec<String>>,
}

impl App {
    /// The settings as they are now.
    #[inline]
    pub fn cfg(&self) -> arc_swap::Guard<Arc<AgentConfig>> {
        self.settings.load()
    }
}

/// What the pipeline established before dispatch.
pub(crate) struct Call {
    pub caller: CallerProfile,
    pub extensions: Vec<String>,
    /// The request headers (shared with the handler's lazy view, see
    /// [`RequestContext::headers`](crate::handler::RequestContext::headers)).
    pub headers: Arc<HeaderMap>,
    pub query: Option<String>,
}
