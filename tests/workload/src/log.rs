//! The workload's log: one JSON object a line on stdout, written and flushed
//! at once, so a test reading the container log sees each event when it
//! happens and in the order it happened (one lock for the whole line keeps
//! threads' lines whole).
//!
//! Every line starts with `t_ms` (Unix epoch milliseconds, comparable with
//! the test's and the kubelet's clocks on the same node), `pid` and
//! `event`. Written by hand: serde_json would double the workload's build.
//! With `LOG_FILE` set, each line is appended to that file too.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// One log line being built.
#[must_use = "a line is only written by `emit`"]
pub struct Line {
    json: String,
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Line {
    /// A line for `event`, stamped now with this process's pid.
    pub fn new(event: &str) -> Line {
        Line::at(now_ms(), std::process::id(), event)
    }

    /// A line stamped `t_ms` and `pid` (fixed, for tests).
    pub fn at(t_ms: u64, pid: u32, event: &str) -> Line {
        let mut line = Line { json: format!("{{\"t_ms\":{t_ms},\"pid\":{pid}") };
        line.key("event");
        escape_into(&mut line.json, event);
        line
    }

    fn key(&mut self, key: &str) {
        self.json.push(',');
        escape_into(&mut self.json, key);
        self.json.push(':');
    }

    /// Adds a string.
    pub fn str(mut self, key: &str, value: &str) -> Line {
        self.key(key);
        escape_into(&mut self.json, value);
        self
    }

    /// Adds a string, or `null`.
    pub fn opt_str(self, key: &str, value: Option<&str>) -> Line {
        match value {
            Some(value) => self.str(key, value),
            None => self.null(key),
        }
    }

    /// Adds an integer.
    pub fn int(mut self, key: &str, value: impl Into<i128>) -> Line {
        self.key(key);
        self.json.push_str(&value.into().to_string());
        self
    }

    /// Adds an integer, or `null`.
    pub fn opt_int(self, key: &str, value: Option<impl Into<i128>>) -> Line {
        match value {
            Some(value) => self.int(key, value),
            None => self.null(key),
        }
    }

    /// Adds a number of seconds (JSON has no NaN or infinity: `null` then).
    pub fn secs(mut self, key: &str, seconds: f64) -> Line {
        self.key(key);
        if seconds.is_finite() {
            // Rust prints f64 without an exponent and `0` for 0.0: valid JSON.
            self.json.push_str(&seconds.to_string());
        } else {
            self.json.push_str("null");
        }
        self
    }

    /// Adds a number of seconds, or `null`.
    pub fn opt_secs(self, key: &str, seconds: Option<f64>) -> Line {
        match seconds {
            Some(seconds) => self.secs(key, seconds),
            None => self.null(key),
        }
    }

    /// Adds a boolean.
    pub fn bool(mut self, key: &str, value: bool) -> Line {
        self.key(key);
        self.json.push_str(if value { "true" } else { "false" });
        self
    }

    /// Adds `null`.
    pub fn null(mut self, key: &str) -> Line {
        self.key(key);
        self.json.push_str("null");
        self
    }

    /// The finished line, with its newline.
    pub fn finish(mut self) -> String {
        self.json.push_str("}\n");
        self.json
    }

    /// Writes the line to stdout and flushes it.
    pub fn emit(self) {
        let text = self.finish();
        let mut out = std::io::stdout().lock();
        // Nothing sensible to do when stdout is gone (the log pipe closed):
        // the workload keeps doing what the test asked of it.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        append_to_log_file(&text);
    }
}

/// Appends a finished line to `LOG_FILE`, when it is set.
pub fn append_to_log_file(text: &str) {
    if let Some(Ok(mut file)) = log_file().map(std::sync::Mutex::lock) {
        let _ = file.write_all(text.as_bytes());
    }
}

/// `LOG_FILE`, opened once for appending: a copy of every line that outlives
/// the container (the kubelet keeps only the newest container logs, and
/// none once the pod is deleted); the tests mount a host directory there.
fn log_file() -> Option<&'static std::sync::Mutex<std::fs::File>> {
    static FILE: std::sync::OnceLock<Option<std::sync::Mutex<std::fs::File>>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os("LOG_FILE").filter(|p| !p.is_empty())?;
        std::fs::OpenOptions::new().create(true).append(true).open(path).ok().map(std::sync::Mutex::new)
    })
    .as_ref()
}

/// Appends `value` as a JSON string.
fn escape_into(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_every_kind_of_value() {
        let line = Line::at(1_700_000_000_123, 42, "request")
            .str("path", "/livez")
            .opt_str("user_agent", None)
            .int("code", -1)
            .opt_int("incarnation", Some(3u64))
            .secs("boot_seconds", 2.5)
            .secs("zero", 0.0)
            .opt_secs("nan", Some(f64::NAN))
            .bool("draining", true)
            .finish();
        assert_eq!(
            line,
            "{\"t_ms\":1700000000123,\"pid\":42,\"event\":\"request\",\"path\":\"/livez\",\"user_agent\":null,\
             \"code\":-1,\"incarnation\":3,\"boot_seconds\":2.5,\"zero\":0,\"nan\":null,\"draining\":true}\n"
        );
    }

    #[test]
    fn strings_are_escaped() {
        let line = Line::at(0, 1, "request").str("path", "/a\"b\\c\n\u{1}é").finish();
        assert_eq!(line, "{\"t_ms\":0,\"pid\":1,\"event\":\"request\",\"path\":\"/a\\\"b\\\\c\\n\\u0001é\"}\n");
    }
}
