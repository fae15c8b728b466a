//! The backend behind the gateways: a links service that keeps its own log
//! of every call, which the suite's invariant is checked against. Each
//! request names its call (`c17` in `name`), so the log says, per call,
//! which UUID the gateway sent (the alias it resolved) and which it got
//! back (the aliases the model was then shown). A call named `hold:c17`
//! is held open after it is logged, until released: a gateway can then be
//! killed while the call is in flight. One named `stuck:c17` is held for
//! 30 s whatever is released: a call that outlives a gateway's drain.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use proto_ai_tools_tests::pb;
use proto_ai_tools_tests::pb::links_service_server::{LinksService, LinksServiceServer};
use tonic::{Request, Response, Status};

/// One call as the backend saw it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The call's number, from the name it carried.
    pub call: u64,
    /// The UUID the gateway sent in `link_id` (an update): what the alias
    /// the model sent was resolved to.
    pub received: Option<String>,
    /// The link's id and page theme id in the answer: what the aliases in
    /// the model's result stand for.
    pub returned: Option<(String, String)>,
}

#[derive(Default)]
struct State {
    links: HashMap<String, pb::Link>,
    log: Vec<Entry>,
}

/// The service's state; clones share it.
#[derive(Clone)]
pub struct Backend {
    state: Arc<Mutex<State>>,
    /// Calls being held open right now.
    held: Arc<AtomicUsize>,
    release: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Default for Backend {
    fn default() -> Self {
        Self {
            state: Arc::default(),
            held: Arc::default(),
            release: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }
}

/// The call number in a request's `name`: `c17` or `hold:c17`.
fn call_of(name: &str) -> Option<(u64, Hold)> {
    let (hold, rest) = if let Some(rest) = name.strip_prefix("hold:") {
        (Hold::UntilReleased, rest)
    } else if let Some(rest) = name.strip_prefix("stuck:") {
        (Hold::Stuck, rest)
    } else {
        (Hold::No, name)
    };
    rest.strip_prefix('c')?.parse().ok().map(|n| (n, hold))
}

/// How long a call is held open once logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    No,
    /// Until [`Backend::release`].
    UntilReleased,
    /// [`HELD_AT_MOST`], released or not.
    Stuck,
}

/// The longest a call is held open.
const HELD_AT_MOST: Duration = Duration::from_secs(30);

impl Backend {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every call logged so far, in order of arrival.
    pub fn log(&self) -> Vec<Entry> {
        self.lock().log.clone()
    }

    /// How many calls are held open now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }

    /// Lets every held call (and every later one) answer.
    pub fn release(&self) {
        self.release.send_replace(true);
    }

    /// Holds the call open as `hold` says: until [`release`](Self::release),
    /// at most [`HELD_AT_MOST`].
    async fn hold(&self, hold: Hold) {
        if hold == Hold::No {
            return;
        }
        self.held.fetch_add(1, Ordering::SeqCst);
        let mut release = self.release.subscribe();
        let released = async {
            match hold {
                Hold::UntilReleased => drop(release.wait_for(|r| *r).await),
                _ => std::future::pending().await,
            }
        };
        let _ = tokio::time::timeout(HELD_AT_MOST, released).await;
        self.held.fetch_sub(1, Ordering::SeqCst);
    }

    /// The service, for a tonic router.
    pub fn service(&self) -> LinksServiceServer<Self> {
        LinksServiceServer::new(self.clone())
    }
}

#[tonic::async_trait]
impl LinksService for Backend {
    async fn create_link(
        &self,
        request: Request<pb::CreateLinkRequest>,
    ) -> Result<Response<pb::CreateLinkResponse>, Status> {
        let r = request.into_inner();
        let name = r.name.clone().unwrap_or_default();
        let Some((call, hold)) = call_of(&name) else {
            return Err(Status::invalid_argument("the name carries no call number"));
        };
        let link = pb::Link {
            id: proto_ai_tools_tests::new_uuid(),
            page_theme_id: proto_ai_tools_tests::new_uuid(),
            destination: r.destination,
            name,
            ..pb::Link::default()
        };
        {
            // The link exists from here on, answered or not.
            let mut s = self.lock();
            s.links.insert(link.id.clone(), link.clone());
            s.log.push(Entry {
                call,
                received: None,
                returned: Some((link.id.clone(), link.page_theme_id.clone())),
            });
        }
        self.hold(hold).await;
        Ok(Response::new(pb::CreateLinkResponse { link: Some(link) }))
    }

    async fn update_link(
        &self,
        request: Request<pb::UpdateLinkRequest>,
    ) -> Result<Response<pb::UpdateLinkResponse>, Status> {
        let r = request.into_inner();
        let name = r.name.clone().unwrap_or_default();
        let Some((call, hold)) = call_of(&name) else {
            return Err(Status::invalid_argument("the name carries no call number"));
        };
        let found = {
            let mut s = self.lock();
            let found = s.links.get_mut(&r.link_id).map(|link| {
                link.name.clone_from(&name);
                link.clone()
            });
            s.log.push(Entry {
                call,
                received: Some(r.link_id.clone()),
                returned: found
                    .as_ref()
                    .map(|l| (l.id.clone(), l.page_theme_id.clone())),
            });
            found
        };
        self.hold(hold).await;
        match found {
            Some(link) => Ok(Response::new(pb::UpdateLinkResponse { link: Some(link) })),
            None => Err(Status::not_found("no such link")),
        }
    }

    async fn list_links(
        &self,
        _request: Request<pb::ListLinksRequest>,
    ) -> Result<Response<pb::ListLinksResponse>, Status> {
        // Not used by the suite: a list would show one scope the links of
        // every other, which the call log could not tell apart.
        Err(Status::unimplemented("the fault suite lists nothing"))
    }
}

/// The backend served on loopback, and the runtime it runs on.
pub struct Served {
    pub backend: Backend,
    pub url: String,
    // Dropped last: the server's tasks run on it.
    _server: proto_ai_tools_tests::Server,
    _runtime: tokio::runtime::Runtime,
}

/// Serves a fresh backend on `127.0.0.1:0`.
pub fn serve() -> Result<Served, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("a runtime: {e}"))?;
    let backend = Backend::default();
    let router = tonic::transport::Server::builder().add_service(backend.service());
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let server = runtime
        .block_on(proto_ai_tools_tests::serve_router(addr, router))
        .map_err(|e| format!("the backend could not listen: {e}"))?;
    Ok(Served {
        backend,
        url: server.url(),
        _server: server,
        _runtime: runtime,
    })
}
