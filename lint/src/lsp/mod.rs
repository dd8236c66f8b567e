//! `lifeguard lsp`: a Language Server Protocol server on stdio for YAML and
//! JSON manifests. Diagnostics on open, change and save (a change is
//! linted once the edits stop for [`QUIET`]), each finding's fix and
//! "ignore with a reason" as quick fixes, every fix of a file at once, and
//! hovers. Each file is linted as `lifeguard lint FILE` lints it: its
//! nearest `.lifeguard.yaml`, the Services of its directory (as the editor
//! has them when they are open), the same limits; a file that changes
//! what another's findings depend on (a Service, a policy) has the others
//! linted again.
//!
//! Built on rust-analyzer's `lsp-server`: synchronous, like the rest of
//! the CLI, with the protocol's framing and handshake done for us.

pub mod actions;
pub mod analysis;
pub mod diagnostics;
pub mod elsewhere;
pub mod hover;
pub mod text;
pub mod uri;
pub mod workspace;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{RecvTimeoutError, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability, DidChangeTextDocumentParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams, HoverParams,
    HoverProviderCapability, InitializeParams, MessageType, PublishDiagnosticsParams, SaveOptions, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
    Uri, notification, request,
};
use serde_json::Value;

use crate::input::may_hold_context;
use workspace::Workspace;

/// How long the edits must stop before a changed file is linted again:
/// short enough that diagnostics follow typing within 50 ms on a
/// 1,000-line file (BENCHMARKS.md), long enough that a burst of keystrokes
/// is linted once.
pub const QUIET: Duration = Duration::from_millis(15);

/// Runs the server on stdin and stdout until the client shuts it down;
/// returns the exit code.
pub fn serve_stdio() -> Result<u8> {
    let (connection, io_threads) = Connection::stdio();
    let (id, params) = connection.initialize_start().context("the initialize request")?;
    let init: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let result = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo { name: "lifeguard".into(), version: Some(env!("CARGO_PKG_VERSION").into()) },
    });
    connection.initialize_finish(id, result).context("the initialize answer")?;
    let mut server = Server::new(connection.sender.clone(), root_of(&init));
    server.serve(&connection)?;
    // The writer has sent every answer (each is flushed as it goes); the
    // reader may still wait on a stdin the client keeps open, so the
    // process ends without joining it, as the protocol's `exit` asks.
    drop(connection);
    drop(io_threads);
    Ok(0)
}

/// What the server offers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
            ..TextDocumentSyncOptions::default()
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, actions::fix_all_kind()]),
            ..CodeActionOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// The workspace's root folder, for files without one of their own.
#[allow(deprecated)] // `root_uri` is what older clients (Neovim 0.7) send.
fn root_of(init: &InitializeParams) -> PathBuf {
    let from_folders = init.workspace_folders.as_ref().and_then(|f| f.first()).and_then(|f| uri::to_path(&f.uri));
    from_folders
        .or_else(|| init.root_uri.as_ref().and_then(uri::to_path))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

/// Why a request gets an error rather than a result.
enum Refusal {
    /// A method the server does not serve (`MethodNotFound`, -32601).
    UnknownMethod,
    /// A method it serves, with params that are not that method's
    /// (`InvalidParams`, -32602): what was wrong, and where.
    InvalidParams(String),
}

/// A request's params as the method's type, or what in them is wrong (the
/// field's path and serde's words: "textDocument.uri: invalid type: ...").
fn params_of<P: serde::de::DeserializeOwned>(req: &Request) -> Result<P, Refusal> {
    serde_path_to_error::deserialize(&req.params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        Refusal::InvalidParams(if path == "." { inner.to_string() } else { format!("{path}: {inner}") })
    })
}

struct Server {
    sender: Sender<Message>,
    workspace: Workspace,
    /// Files to lint again, and when.
    pending: HashMap<Uri, Instant>,
}

impl Server {
    fn new(sender: Sender<Message>, root: PathBuf) -> Server {
        Server { sender, workspace: Workspace::new(root), pending: HashMap::new() }
    }

    fn serve(&mut self, connection: &Connection) -> Result<()> {
        loop {
            let next = self.pending.values().min().copied();
            let message = match next {
                Some(deadline) => match connection.receiver.recv_deadline(deadline) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                },
                None => match connection.receiver.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return Ok(()),
                },
            };
            match message {
                Some(Message::Request(req)) => {
                    if connection.handle_shutdown(&req).context("shutdown")? {
                        return Ok(());
                    }
                    self.request(req);
                }
                Some(Message::Notification(n)) => {
                    if n.method == notification::Exit::METHOD {
                        return Ok(());
                    }
                    self.notification(n);
                }
                Some(Message::Response(_)) => {}
                None => {}
            }
            self.lint_due();
        }
    }

    fn send(&self, message: Message) {
        // The client went away: the loop ends on the closed channel.
        let _ = self.sender.send(message);
    }

    fn log(&self, kind: MessageType, text: String) {
        let params = lsp_types::LogMessageParams { typ: kind, message: text };
        self.send(Message::Notification(Notification::new(notification::LogMessage::METHOD.into(), params)));
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let method = req.method.clone();
        let answer = catch_unwind(AssertUnwindSafe(|| self.answer(&req)));
        let response = match answer {
            Ok(Ok(result)) => Response { id, result: Some(result), error: None },
            Ok(Err(Refusal::UnknownMethod)) => {
                Response::new_err(id, ErrorCode::MethodNotFound as i32, format!("unsupported request {method}"))
            }
            Ok(Err(Refusal::InvalidParams(why))) => {
                Response::new_err(id, ErrorCode::InvalidParams as i32, format!("invalid params for {method}: {why}"))
            }
            Err(_) => {
                self.log(MessageType::ERROR, format!("lifeguard: internal error answering {method} (please report)"));
                Response::new_err(id, ErrorCode::InternalError as i32, format!("internal error answering {method}"))
            }
        };
        self.send(Message::Response(response));
    }

    /// The result of a request, or why there is none: a method the server
    /// does not know, or params that are not the method's.
    fn answer(&mut self, req: &Request) -> Result<Value, Refusal> {
        match req.method.as_str() {
            request::CodeActionRequest::METHOD => {
                let params: CodeActionParams = params_of(req)?;
                let uri = params.text_document.uri;
                let Some(open) = self.workspace.open.get(&uri) else { return Ok(Value::Null) };
                let found = actions::actions(
                    &uri,
                    open,
                    &params.range,
                    &params.context.diagnostics,
                    params.context.only.as_deref(),
                    &self.workspace.limits,
                );
                Ok(serde_json::to_value(found).unwrap_or(Value::Null))
            }
            request::HoverRequest::METHOD => {
                let params: HoverParams = params_of(req)?;
                let at = params.text_document_position_params;
                let found = self.workspace.open.get(&at.text_document.uri).and_then(|o| hover::hover(o, at.position));
                Ok(serde_json::to_value(found).unwrap_or(Value::Null))
            }
            _ => Err(Refusal::UnknownMethod),
        }
    }

    fn notification(&mut self, n: Notification) {
        let method = n.method.clone();
        let handled = catch_unwind(AssertUnwindSafe(|| self.notify(n)));
        if handled.is_err() {
            self.log(MessageType::ERROR, format!("lifeguard: internal error handling {method} (please report)"));
        }
    }

    fn notify(&mut self, n: Notification) {
        let now = Instant::now();
        match n.method.as_str() {
            notification::DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                let touches_others = may_hold_context(&p.text_document.text);
                self.workspace.set(uri.clone(), p.text_document.text, p.text_document.version);
                self.lint_now(&uri);
                if touches_others {
                    self.schedule_dependents(&uri, now);
                }
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                // Full sync: the last change holds the whole text.
                let Some(change) = p.content_changes.into_iter().last() else { return };
                let before = self.workspace.open.get(&uri).is_some_and(|o| may_hold_context(&o.text));
                let touches_others = before || may_hold_context(&change.text);
                self.workspace.set(uri.clone(), change.text, p.text_document.version);
                self.pending.insert(uri.clone(), now + QUIET);
                if touches_others {
                    self.schedule_dependents(&uri, now + QUIET);
                }
            }
            notification::DidSaveTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidSaveTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                self.lint_now(&uri);
                self.schedule_dependents(&uri, now);
            }
            notification::DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                let dependents = self.workspace.dependents(&uri);
                self.workspace.open.remove(&uri);
                self.pending.remove(&uri);
                self.publish(&uri, Vec::new(), None);
                for other in dependents {
                    self.pending.insert(other, now);
                }
            }
            notification::DidChangeWatchedFiles::METHOD => {
                let open: Vec<Uri> = self.workspace.open.keys().cloned().collect();
                for uri in open {
                    self.pending.insert(uri, now);
                }
            }
            _ => {}
        }
    }

    fn schedule_dependents(&mut self, uri: &Uri, at: Instant) {
        for other in self.workspace.dependents(uri) {
            let when = self.pending.entry(other).or_insert(at);
            *when = (*when).max(at);
        }
    }

    fn lint_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Uri> = self.pending.iter().filter(|(_, at)| **at <= now).map(|(u, _)| u.clone()).collect();
        for uri in due {
            self.pending.remove(&uri);
            self.lint_now(&uri);
        }
    }

    fn lint_now(&mut self, uri: &Uri) {
        self.pending.remove(uri);
        let linted = catch_unwind(AssertUnwindSafe(|| {
            self.workspace.analyze(uri).map(|open| (diagnostics::diagnostics(uri, &open.analysis), open.version))
        }));
        match linted {
            Ok(Some((found, version))) => self.publish(uri, found, Some(version)),
            Ok(None) => {}
            Err(_) => self
                .log(MessageType::ERROR, format!("lifeguard: internal error linting {} (please report)", uri.as_str())),
        }
    }

    fn publish(&self, uri: &Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version };
        self.send(Message::Notification(Notification::new(notification::PublishDiagnostics::METHOD.into(), params)));
    }
}
