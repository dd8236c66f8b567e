//! A minimal LSP client over the real binary's stdio, for the tests that
//! drive `lifeguard lsp` message by message (the editors' own clients are
//! driven by `tests/tests/lsp_editors.rs`).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running `lifeguard lsp`.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    /// Notifications received while waiting for something else.
    pub notifications: Vec<Value>,
    next_id: i64,
}

/// How long any one wait lasts before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

impl Client {
    /// Starts `binary lsp --stdio` in `cwd` and initializes it with `root`.
    pub fn start(binary: &Path, cwd: &Path, root: &Path) -> Client {
        let mut child = Command::new(binary)
            .args(["lsp", "--stdio"])
            .current_dir(cwd)
            .env_remove("LIFEGUARD_POLICY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start lifeguard lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (send, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if send.send(message).is_err() {
                    return;
                }
            }
        });
        let mut client = Client { child, stdin, incoming, notifications: Vec::new(), next_id: 1 };
        let root_uri = file_uri(root);
        let answer = client.request(
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "capabilities": {},
                   "workspaceFolders": [{"uri": root_uri, "name": "root"}]}),
        );
        assert!(answer["capabilities"]["hoverProvider"] == true, "{answer}");
        client.notify("initialized", json!({}));
        client
    }

    fn write(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next(&mut self, deadline: Instant) -> Option<Value> {
        match self.incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its stdout"),
        }
    }

    /// Sends a request and returns its result (panics on an error answer).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request_raw(method, params);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Sends a request and returns the whole answer.
    pub fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.next(deadline).unwrap_or_else(|| panic!("no answer to {method} within {WAIT:?}"));
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// The next diagnostics published for `uri` (after those already seen).
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        self.diagnostics_within(uri, WAIT).unwrap_or_else(|| panic!("no diagnostics for {uri} within {WAIT:?}"))
    }

    /// The next diagnostics published for `uri`, if any come within `limit`.
    pub fn diagnostics_within(&mut self, uri: &str, limit: Duration) -> Option<Vec<Value>> {
        let published = |m: &Value| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
        if let Some(at) = self.notifications.iter().position(published) {
            let m = self.notifications.remove(at);
            return Some(m["params"]["diagnostics"].as_array().cloned().unwrap_or_default());
        }
        let deadline = Instant::now() + limit;
        while let Some(message) = self.next(deadline) {
            if published(&message) {
                return Some(message["params"]["diagnostics"].as_array().cloned().unwrap_or_default());
            }
            self.notifications.push(message);
        }
        None
    }

    /// The diagnostics published for `uri` at `version` (earlier ones skipped).
    pub fn diagnostics_at(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let published = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        };
        self.notifications.retain(|m| {
            !(m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] != version)
        });
        if let Some(at) = self.notifications.iter().position(published) {
            let m = self.notifications.remove(at);
            return m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let message =
                self.next(deadline).unwrap_or_else(|| panic!("no diagnostics for {uri} v{version} within {WAIT:?}"));
            if published(&message) {
                return message["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            }
            if message["method"] != "textDocument/publishDiagnostics" {
                self.notifications.push(message);
            }
        }
    }

    /// Opens a document.
    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    /// Replaces a document's text (full sync).
    pub fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Shuts the server down as a client does; returns its exit code.
    pub fn shutdown(mut self) -> Option<i32> {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The `file://` URI of an absolute path (as editors write them: only the
/// characters RFC 3986 reserves escaped).
pub fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(char::from(byte)),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// Applies the edits of a WorkspaceEdit's `changes` for `uri` to `text`
/// (UTF-16 positions, all against the original text).
pub fn apply_edits(text: &str, edit: &Value, uri: &str) -> String {
    let edits = edit["changes"][uri].as_array().cloned().unwrap_or_default();
    let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset = |p: &Value| -> usize {
        let line = p["line"].as_u64().unwrap_or(0) as usize;
        let Some(&start) = starts.get(line) else { return text.len() };
        let end = text[start..].find('\n').map_or(text.len(), |e| start + e);
        let mut units = 0;
        for (at, c) in text[start..end].char_indices() {
            if units >= p["character"].as_u64().unwrap_or(0) as usize {
                return start + at;
            }
            units += c.len_utf16();
        }
        end
    };
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    let mut out = String::new();
    let mut at = 0;
    for (from, to, new) in spans {
        out.push_str(&text[at..from]);
        out.push_str(&new);
        at = to;
    }
    out.push_str(&text[at..]);
    out
}

/// A small deterministic generator (xorshift): the same edits on every run.
pub struct Random(pub u64);

impl Random {
    /// A number below `below` (0 when `below` is 0).
    pub fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below.max(1) as u64) as usize
    }
}

/// What a fuzzing edit inserts: YAML's structure, quotes, anchors, multi-byte
/// characters (two UTF-16 units for the clef), tabs.
const PIECES: [&str; 19] =
    ["- ", ": ", "{", "}", "[", "]", "&a ", "*a", "\n", "  ", "\"", "'", "---\n", "é", "𝄞", "\t", "#", "|\n", "0x1F"];

/// Opens `uri` with `text`, then sends random insertions and deletions
/// (full-text changes) until `deadline` or `max` edits, with a code action
/// and a hover every 50 edits; returns how many edits were sent. The
/// diagnostics of the last text are awaited, and none of those published
/// may be an internal error.
pub fn random_edits(
    client: &mut Client,
    uri: &str,
    mut text: String,
    random: &mut Random,
    deadline: Instant,
    max: usize,
) -> usize {
    client.open(uri, &text);
    let mut edits = 0;
    while Instant::now() < deadline && edits < max {
        let mut at = random.next(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        if random.next(2) == 0 {
            text.insert_str(at, PIECES[random.next(PIECES.len())]);
        } else {
            let mut end = (at + random.next(12)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(at..end, "");
        }
        edits += 1;
        client.change(uri, edits as i64 + 1, &text);
        if edits % 50 == 0 {
            let range = json!({"start": {"line": random.next(40), "character": 0}, "end": {"line": random.next(40), "character": 4}});
            client.request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
            );
            client.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": range["start"]}));
        }
    }
    // Whatever was published on the way, then the last text's diagnostics:
    // the engine's panics are caught and said as a diagnostic, never one.
    let internal = |d: &Value| d["message"].as_str().is_some_and(|m| m.contains("internal error"));
    for m in client.notifications.iter().filter(|m| m["method"] == "textDocument/publishDiagnostics") {
        let diagnostics = m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
        assert!(!diagnostics.iter().any(internal), "{uri}: {diagnostics:#?}");
    }
    let last = client.diagnostics_at(uri, edits as i64 + 1);
    assert!(!last.iter().any(internal), "{uri} after {edits} edits: {last:#?}\n{text}");
    edits
}

/// The log messages the server sent (a panic is caught and logged there).
pub fn logged(client: &Client) -> Vec<&Value> {
    client.notifications.iter().filter(|m| m["method"] == "window/logMessage").collect()
}
