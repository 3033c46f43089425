//! The running trace export ([`Tracing`]), which a configuration reload can turn on, off or
//! point elsewhere while the process runs: the export layer of the subscriber holds a tracer
//! whose provider is swapped, so the subscriber itself never changes. The provider replaced is
//! flushed on a thread of its own, and shut down once the last span started on it has ended:
//! no span is lost to a reload.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwap;
use opentelemetry::trace::{SpanBuilder, TracerProvider as _};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use super::export::{Export, Protocol};
use super::{ON, TARGET};

/// The name of the instrumentation scope of every span.
const SCOPE: &str = "a2a-rs";

/// A tracer whose provider can be replaced (the export layer keeps one for the process's life).
#[derive(Clone)]
struct Swap(Arc<ArcSwap<SdkTracer>>);

impl opentelemetry::trace::Tracer for Swap {
    type Span = opentelemetry_sdk::trace::Span;

    fn build_with_context(
        &self,
        builder: SpanBuilder,
        parent_cx: &opentelemetry::Context,
    ) -> Self::Span {
        self.0.load().build_with_context(builder, parent_cx)
    }
}

/// A provider without a processor: the tracer of an export that is off (no span reaches it:
/// the span helpers create none while the export is off).
fn idle() -> SdkTracer {
    SdkTracerProvider::builder().build().tracer(SCOPE)
}

/// A provider exporting to `e`, with its batch processor (a thread of its own).
fn provider(e: &Export) -> Result<SdkTracerProvider, String> {
    let exporter = match e.protocol {
        Protocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(e.endpoint.clone())
            .with_headers(e.headers.iter().cloned().collect::<HashMap<_, _>>())
            .build(),
        Protocol::Grpc => {
            let mut md = tonic::metadata::MetadataMap::new();
            for (k, v) in &e.headers {
                let key = tonic::metadata::AsciiMetadataKey::from_bytes(k.as_bytes())
                    .map_err(|_| format!("OTLP header name {k:?} is not a header name"))?;
                let value = tonic::metadata::AsciiMetadataValue::try_from(v.as_str())
                    .map_err(|_| format!("OTLP header {k:?}: not a header value"))?;
                md.insert(key, value);
            }
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(e.endpoint.clone())
                .with_metadata(md)
                .build()
        }
    }
    .map_err(|err| format!("OTLP exporter ({}): {err}", e.endpoint))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(e.service_name.clone())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// An export built and not yet in use ([`Tracing::stage`]): nothing changes until
/// [`Tracing::switch`], and dropping it changes nothing.
pub struct Staged(Option<(Export, SdkTracerProvider)>);

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Staged")
            .field(&self.0.as_ref().map(|(e, _)| e))
            .finish()
    }
}

/// The trace export of a process: off, or exporting to one [`Export`];
/// [`Tracing::shutdown`] sends what is still queued.
pub struct Tracing {
    tracer: Swap,
    running: Mutex<Option<(Export, SdkTracerProvider)>>,
}

impl std::fmt::Debug for Tracing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracing")
            .field("export", &self.export())
            .finish()
    }
}

impl Tracing {
    /// An export that is off (no thread, no exporter); [`Tracing::switch`] turns it on.
    pub fn off() -> Tracing {
        Tracing {
            tracer: Swap(Arc::new(ArcSwap::from_pointee(idle()))),
            running: Mutex::new(None),
        }
    }

    /// Starts exporting to `e`. Call it inside the Tokio runtime (the gRPC channel lives
    /// there), after [`super::take_header_variables`].
    pub fn start(e: &Export) -> Result<Tracing, String> {
        let t = Tracing::off();
        t.switch(Tracing::stage(Some(e))?);
        Ok(t)
    }

    /// Builds the exporter of `e` (`None`: the export off) without using it yet: a bad
    /// export is refused here, before anything changed. Inside the Tokio runtime.
    pub fn stage(e: Option<&Export>) -> Result<Staged, String> {
        Ok(Staged(match e {
            Some(e) => Some((e.clone(), provider(e)?)),
            None => None,
        }))
    }

    /// Exports from now on as `staged` says. The provider replaced sends what it holds from a
    /// thread of its own; spans started on it and still open go to it when they end, and it
    /// shuts down after the last of them.
    pub fn switch(&self, staged: Staged) {
        let tracer = match &staged.0 {
            Some((_, p)) => p.tracer(SCOPE),
            None => idle(),
        };
        let on = staged.0.is_some();
        let old = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            self.tracer.0.store(Arc::new(tracer));
            ON.store(on, Ordering::Relaxed);
            std::mem::replace(&mut *running, staged.0)
        };
        if let Some((e, p)) = old {
            let retire = move || {
                if let Err(err) = p.force_flush() {
                    eprintln!("OTLP exporter ({}) flush: {err}", e.endpoint);
                }
                // The last reference but those of spans still open: it shuts down when they end.
                drop(p);
            };
            if let Err(err) = std::thread::Builder::new()
                .name("otlp-retire".into())
                .spawn(retire)
            {
                eprintln!("OTLP exporter: no thread to flush the replaced export: {err}");
            }
        }
    }

    /// Where traces go now (`None`: off).
    pub fn export(&self) -> Option<Export> {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.as_ref().map(|(e, _)| e.clone())
    }

    /// The `tracing` layer exporting the spans of target [`TARGET`] (to wherever the export
    /// goes at the time; nowhere while it is off).
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use tracing_subscriber::Layer as _;
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer.clone())
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_target(false)
            .with_filter(tracing_subscriber::filter::filter_fn(|m| {
                m.target() == TARGET
            }))
    }

    /// Sends the spans still queued and stops the exporter (the binaries' SIGTERM path). Call
    /// it outside the runtime's worker threads, while the runtime still runs.
    pub fn shutdown(&self) {
        ON.store(false, Ordering::Relaxed);
        let old = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            self.tracer.0.store(Arc::new(idle()));
            running.take()
        };
        if let Some((_, p)) = old
            && let Err(e) = p.shutdown()
        {
            eprintln!("OTLP exporter shutdown: {e}");
        }
    }
}

/// The export of this process (the binaries'), set once by [`install`].
static PROCESS: OnceLock<Tracing> = OnceLock::new();

/// Makes `t` the process's export ([`process`]); `None` when one was installed already.
pub fn install(t: Tracing) -> Option<&'static Tracing> {
    PROCESS.set(t).ok()?;
    PROCESS.get()
}

/// The process's export, when a binary installed one ([`install`]).
pub fn process() -> Option<&'static Tracing> {
    PROCESS.get()
}
