//! Where reports go: stdout, where a closed pipe (`lifeguard lint | head`)
//! is not an error, or a file, coloured only when asked.

use std::io::Write;

use anyhow::{Context, Result};

/// Writes a report to a file.
pub(crate) fn write_file_with(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let mut sink = Sink::file(path)?;
    sink.write_with(write);
    sink.finish()
}

/// Writes a report to stdout.
pub(crate) fn write_stdout(text: &str) -> Result<()> {
    write_stdout_with(|w| w.write_all(text.as_bytes()))
}

/// [`write_stdout`] for a report written in pieces.
pub(crate) fn write_stdout_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut sink = Sink::stdout(false);
    sink.write_with(write);
    sink.finish()
}

/// [`write_stdout_with`] for a report rendered without styles, which
/// needs no stream to strip them.
pub(crate) fn write_plain_stdout_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut sink = Sink::stdout(true);
    sink.write_with(write);
    sink.finish()
}

/// A report's destination: written whole by the functions above, or
/// opened before the report is whole so that it is written as it is made
/// (`audit` writes each namespace's findings as it is judged). A failed
/// write stops the writes after it; [`Sink::finish`] reports it.
pub(crate) struct Sink {
    w: Box<dyn Write>,
    /// What is written to, for the error.
    what: String,
    /// Whether it is stdout, where a closed pipe is not an error.
    stdout: bool,
    error: Option<std::io::Error>,
}

impl Sink {
    /// A report file, created now.
    pub(crate) fn file(path: &std::path::Path) -> Result<Sink> {
        let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let w = std::io::BufWriter::new(anstream::AutoStream::new(file, anstream::ColorChoice::global()));
        Ok(Sink { w: Box::new(w), what: format!("writing {}", path.display()), stdout: false, error: None })
    }

    /// Stdout; `plain` for a report rendered without styles, which needs no
    /// stream to strip them.
    pub(crate) fn stdout(plain: bool) -> Sink {
        let w: Box<dyn Write> = if plain {
            Box::new(std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock()))
        } else {
            Box::new(std::io::BufWriter::with_capacity(64 * 1024, anstream::stdout()))
        };
        Sink { w, what: "writing to stdout".to_owned(), stdout: true, error: None }
    }

    /// Writes with `write`, unless an earlier write failed.
    pub(crate) fn write_with(&mut self, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
        if self.error.is_none() {
            self.error = write(&mut self.w).err();
        }
    }

    /// Flushes; the first error of the writes, if any.
    pub(crate) fn finish(mut self) -> Result<()> {
        let result = match self.error.take() {
            Some(e) => Err(e),
            None => self.w.flush(),
        };
        match result {
            Ok(()) => Ok(()),
            // A closed pipe (`lifeguard audit | head`) is not an error worth a message.
            Err(e) if self.stdout && e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(e).context(self.what),
        }
    }
}
