//! The logs on stderr (stdout carries MCP over stdio, or the tools): their
//! format (`--log-format`), their filter (`RUST_LOG`), and the thread that
//! writes them off the request's path.

/// The format of the logs on stderr (`--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum LogFormat {
    /// Lines of text.
    #[default]
    Text,
    /// One JSON object a line, for a log collector.
    Json,
}

/// The filter of the logs when `RUST_LOG` says nothing: the command's own
/// news and the runtime's, warnings of everything else.
const DEFAULT_LOG_FILTER: &str = "warn,ai_tools=info,proto_ai_tools=info";

/// The log lines that may wait for the writer thread before a request
/// that logs waits too: about 10 to 40 MB of lines at the gateway's usual
/// 100 to 400 bytes a line. See [`logs`].
const LOG_BUFFER_LINES: usize = 100_000;

/// Logs to stderr (stdout carries MCP over stdio, or the tools), as
/// `format` says, filtered by `RUST_LOG` or else [`DEFAULT_LOG_FILTER`].
/// A `RUST_LOG` that does not parse is said, and the default used.
///
/// Off the request's path: an event is formatted where it happens, then
/// handed to a channel, and one thread (`ai-tools-logs`) writes the lines
/// to stderr in order, so a request never waits on stderr's writes (a
/// pipe a log collector drains late, a terminal). The channel holds
/// [`LOG_BUFFER_LINES`] lines and is not lossy: the logs carry the audit
/// of consent decisions (target `proto_ai_tools::consent`) and every tool
/// call's outcome, which must not go missing, so when that many lines are
/// behind, whoever logs next waits for room, as every write did before.
///
/// Every line is written before the process exits while the returned
/// guard lives: `main` drops it after `run` returns (a normal end, the
/// ctrl-c / `SIGTERM` shutdown, or a failure at start), before it says
/// why it failed, so the lines come out first and in order. Dropping it
/// waits up to a second for the lines still queued.
pub(crate) fn logs(
    format: LogFormat,
    traces: Option<crate::traces::TraceLayer>,
) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{EnvFilter, Layer as _};
    let (filter, bad) = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => match EnvFilter::try_new(&text) {
            Ok(filter) => (filter, None),
            Err(e) => (
                EnvFilter::new(DEFAULT_LOG_FILTER),
                Some(format!("{text}: {e}")),
            ),
        },
        _ => (EnvFilter::new(DEFAULT_LOG_FILTER), None),
    };
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_BUFFER_LINES)
        .lossy(false)
        .thread_name("ai-tools-logs")
        .finish(std::io::stderr());
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(OrStderr(writer))
        .with_ansi(false);
    // RUST_LOG filters the lines only: the traces have their own filter
    // (`traces`), which takes the DEBUG spans of each call's steps.
    let lines = match format {
        LogFormat::Text => lines.with_filter(filter).boxed(),
        LogFormat::Json => lines.json().with_filter(filter).boxed(),
    };
    let installed = tracing_subscriber::registry()
        .with(traces)
        .with(lines)
        .try_init();
    if let Err(e) = installed {
        eprintln!("ai-tools: the logs could not be set up: {e}");
        return None;
    }
    if let Some(bad) = bad {
        tracing::warn!("RUST_LOG is not a filter ({bad}); using {DEFAULT_LOG_FILTER}");
    }
    Some(guard)
}

/// The log writer of [`logs`]: the channel to the writer thread, and
/// stderr itself for a line logged after the thread has stopped (while the
/// runtime winds down, once `main` has dropped the guard), which would
/// otherwise be lost.
struct OrStderr(tracing_appender::non_blocking::NonBlocking);

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for OrStderr {
    type Writer = OrStderr;

    fn make_writer(&'a self) -> Self::Writer {
        OrStderr(self.0.clone())
    }
}

impl std::io::Write for OrStderr {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        // Not lossy: the channel refuses a line only once it is closed.
        match self.0.write(line) {
            Ok(written) => Ok(written),
            Err(_) => std::io::stderr().lock().write(line),
        }
    }

    fn write_all(&mut self, line: &[u8]) -> std::io::Result<()> {
        match self.0.write_all(line) {
            Ok(()) => Ok(()),
            Err(_) => std::io::stderr().lock().write_all(line),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
