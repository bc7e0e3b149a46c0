//! Progress for long waits: a spinner on standard error when it is a
//! terminal, nothing otherwise (a pipe or a log gets only the result).

use std::io::{IsTerminal, Write};
use std::time::Instant;

const FRAMES: [char; 4] = ['|', '/', '-', '\\'];

pub struct Spinner {
    on: bool,
    what: String,
    start: Instant,
    frame: usize,
}

impl Spinner {
    pub fn new(what: String) -> Spinner {
        Spinner {
            on: std::io::stderr().is_terminal(),
            what,
            start: Instant::now(),
            frame: 0,
        }
    }

    /// Say something else from the next redraw on.
    pub fn say(&mut self, what: String) {
        if self.on && what.len() < self.what.len() {
            // The line is redrawn in place: erase the longer one first.
            self.clear();
        }
        self.what = what;
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Redraw: the next frame and the time waited.
    pub fn tick(&mut self) {
        if !self.on {
            return;
        }
        self.frame = (self.frame + 1) % FRAMES.len();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} {} ({:.1} s)",
            FRAMES[self.frame],
            self.what,
            self.start.elapsed().as_secs_f64()
        );
        let _ = err.flush();
    }

    /// Erase the line, before the result is printed.
    pub fn clear(&self) {
        if self.on {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
