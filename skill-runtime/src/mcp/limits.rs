//! The limits of the Streamable HTTP transport, and how they fit the
//! process's descriptor limit.

/// Limits of the Streamable HTTP transport, against clients that hold
/// connections open and pages that should not reach a local server.
/// [`HttpLimits::default`] and its builder methods set them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpLimits {
    /// Browser origins accepted besides loopback ones (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*`, and the same over https), like
    /// `https://app.example.com:443`. A request whose `Origin` header is none
    /// of them is answered 403, as the MCP transport requires; a request
    /// without an `Origin` (not from a browser) is served.
    pub allowed_origins: Vec<String>,
    /// Names the server is reached by besides loopback ones (`localhost`,
    /// `127.0.0.1`, `::1`), as a request's `Host` says them, like
    /// `mcp.example.com` or `mcp.example.com:8443` (a name without a port
    /// accepts any). A request whose `Host` is none of them is answered 403.
    /// A server with an authenticator and no names listed here accepts any
    /// `Host`: credentials, not the name, decide who is served.
    pub allowed_hosts: Vec<String>,
    /// Connections served at once. Past the cap, the connection that has
    /// waited longest for (or in) a request is closed to admit the new one; a
    /// connection running a call is never closed for this. At start the cap
    /// is lowered, with a warning, to what the process's descriptor limit
    /// (`ulimit -n`) leaves room for.
    pub max_connections: usize,
    /// Time a client has to send a request's headers: a connection that sends
    /// nothing, or half a request, for this long is closed (an idle
    /// kept-alive one too).
    pub header_timeout: std::time::Duration,
    /// Time a client has to send a request's body, on top of the time its
    /// length takes at [`HttpLimits::min_body_rate`]: past it, 408 and the
    /// connection is closed.
    pub body_timeout: std::time::Duration,
    /// The slowest a body may come, in bytes a second (see
    /// [`HttpLimits::body_timeout`]).
    pub min_body_rate: u64,
    /// Sessions kept at once; creating one more closes the session used least
    /// recently (its client gets 404 and may initialize again).
    pub max_sessions: usize,
    /// A session with no request for this long is closed (by the next
    /// request to the endpoint after that time).
    pub session_idle: std::time::Duration,
    /// Largest request body read; a larger one is answered 413.
    pub max_body_bytes: usize,
    /// Requests a caller may send in any 60 seconds (each caller by its user
    /// id, the subject its credentials name; without an authenticator, every
    /// request is the server's own caller and shares one window). Past it,
    /// 429 with `Retry-After`. Counted in this process; `None`, no limit.
    pub caller_rate: Option<u32>,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_connections: 512,
            header_timeout: std::time::Duration::from_secs(10),
            body_timeout: std::time::Duration::from_secs(10),
            min_body_rate: 16 * 1024,
            max_sessions: 1_000,
            session_idle: std::time::Duration::from_secs(300),
            max_body_bytes: 4 * 1024 * 1024,
            caller_rate: None,
        }
    }
}

impl HttpLimits {
    /// Also accept requests from the browser origin `origin`.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Also accept requests whose `Host` is `host` (a name, or a name and a
    /// port).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Serve at most `n` connections at once.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n;
        self
    }

    /// Close a connection that has not sent a request's headers within `t`.
    pub fn header_timeout(mut self, t: std::time::Duration) -> Self {
        self.header_timeout = t;
        self
    }

    /// Close a connection that has not sent a request's body within `t`
    /// (plus the time its length takes at the minimum rate).
    pub fn body_timeout(mut self, t: std::time::Duration) -> Self {
        self.body_timeout = t;
        self
    }

    /// Keep at most `n` sessions, closing the least recently used beyond.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Close a session after `t` without a request.
    pub fn session_idle(mut self, t: std::time::Duration) -> Self {
        self.session_idle = t;
        self
    }

    /// These limits with `max_connections` lowered to what the process's
    /// descriptor limit (`ulimit -n`, read now) leaves room for, keeping 64
    /// descriptors for everything else (the listener, Redis, files); and
    /// why, when it was lowered. The HTTP server applies this at start.
    pub fn fitted(mut self) -> (HttpLimits, Option<String>) {
        const RESERVED: u64 = 64;
        let Some(limit) = descriptor_limit() else {
            return (self, None);
        };
        let room = usize::try_from(limit.saturating_sub(RESERVED).max(1)).unwrap_or(usize::MAX);
        if self.max_connections <= room {
            return (self, None);
        }
        let why = format!(
            "the process may hold {limit} descriptors (ulimit -n): serving at most {room} HTTP connections at once instead of {}; raise the limit for more",
            self.max_connections
        );
        self.max_connections = room;
        (self, Some(why))
    }

    /// Let each caller send at most `per_minute` requests in any 60 seconds
    /// (see [`HttpLimits::caller_rate`](HttpLimits#structfield.caller_rate)).
    pub fn caller_rate(mut self, per_minute: u32) -> Self {
        self.caller_rate = Some(per_minute);
        self
    }

    /// Answer 413 to a request body over `n` bytes.
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n;
        self
    }
}

/// The process's soft limit of open descriptors, where it has one.
fn descriptor_limit() -> Option<u64> {
    #[cfg(all(unix, feature = "mcp-http"))]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(all(unix, feature = "mcp-http")))]
    {
        None
    }
}

/// The loopback origins the HTTP transport always accepts.
pub const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The `Host` names always accepted (the port is not checked): loopback
/// ones, so a page served elsewhere cannot reach a local server through DNS
/// rebinding. [`HttpLimits::allowed_hosts`] adds the names a deployment is
/// reached by.
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];
