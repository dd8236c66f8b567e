//! Where reports go: stdout, where a closed pipe (`lifeguard lint | head`)
//! is not an error, or a file, coloured only when asked.

use std::io::Write;

use anyhow::{Context, Result};

/// Writes a report to a file.
pub(crate) fn write_file_with(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut stream = std::io::BufWriter::new(anstream::AutoStream::new(file, anstream::ColorChoice::global()));
    write(&mut stream).and_then(|()| stream.flush()).with_context(|| format!("writing {}", path.display()))
}

/// Writes a report to stdout.
pub(crate) fn write_stdout(text: &str) -> Result<()> {
    write_stdout_with(|w| w.write_all(text.as_bytes()))
}

/// [`write_stdout`] for a report written in pieces.
pub(crate) fn write_stdout_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    written(write, anstream::stdout())
}

/// [`write_stdout_with`] for a report rendered without styles, which
/// needs no stream to strip them.
pub(crate) fn write_plain_stdout_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    written(write, std::io::stdout().lock())
}

fn written(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>, out: impl Write) -> Result<()> {
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, out);
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`lifeguard lint | head`) is not an error worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("writing to stdout"),
    }
}
