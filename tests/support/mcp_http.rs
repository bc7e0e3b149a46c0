//! An MCP server over HTTP (`skill-examples mcp --http ...`) as a child
//! process, for the tests that drive it with raw requests.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running server, killed (and waited for) when dropped.
pub struct Server {
    pub child: Child,
    /// `HOST:PORT` it serves at.
    pub addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `cmd` (an MCP server over HTTP) and wait for it to say where it
/// serves; what it said before that. Its standard error is drained after,
/// so the server never blocks on it.
pub fn launch(mut cmd: Command) -> (Server, String) {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    // Owned by `Server` at once, whose drop kills and waits for it.
    let mut server = Server {
        child: cmd.spawn().expect("the server starts"),
        addr: String::new(),
    };
    let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
    let mut said = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server exited: {said}"
        );
        let served = [
            "serving MCP (Streamable HTTP) at http://",
            "serving the console at http://",
        ]
        .iter()
        .find_map(|said| line.trim().strip_prefix(said));
        if let Some(rest) = served {
            server.addr = rest
                .trim_end_matches("/mcp")
                .trim_end_matches('/')
                .to_owned();
            std::thread::spawn(move || for _ in stderr.lines() {});
            return (server, said);
        }
        said.push_str(&line);
    }
}
