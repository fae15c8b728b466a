//! Long-running operations: a method that returns
//! `google.longrunning.Operation` and says, in
//! `google.longrunning.operation_info`, what a finished one holds.

use prost_reflect::{MessageDescriptor, MethodDescriptor, Value};

/// The full name of the message a long-running method returns.
pub const OPERATION: &str = "google.longrunning.Operation";

/// The full name of the service that polls and cancels operations.
pub const OPERATIONS_SERVICE: &str = "google.longrunning.Operations";

/// The number of `google.longrunning.operation_info` on
/// `google.protobuf.MethodOptions` (googleapis' `operations.proto`).
pub const OPERATION_INFO_EXTENSION: u32 = 1049;

/// What a long-running method's operation holds when it is done: the type
/// packed in its `response` and in its `metadata` while it runs
/// (`operation_info.response_type` and `metadata_type`, resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LongRunning {
    /// The type of the finished operation's `response`.
    pub response: MessageDescriptor,
    /// The type of its `metadata`, when `metadata_type` names one the pool
    /// has (a name it lacks is left out: metadata is informative only).
    pub metadata: Option<MessageDescriptor>,
}

/// Whether `method` is long-running, and if so what its operation holds.
///
/// `None` unless the method returns [`OPERATION`] and carries
/// `google.longrunning.operation_info` (read by number,
/// [`OPERATION_INFO_EXTENSION`], from whichever file declares it). A type
/// name is resolved as googleapis documents it: a name without a package is
/// the method's package's, and a name that is not found there is read as
/// fully qualified (`google.protobuf.Empty`). `Some(Err)` says why the
/// response type cannot be used: it is empty, or the pool has no message
/// of that name.
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "protox")] {
/// use ai_tools_schema::proto::long_running;
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../proto");
/// let mut compiler =
///     protox::Compiler::new([dir.to_owned(), format!("{dir}/third_party/googleapis")]).unwrap();
/// compiler.open_file("lro/v1/reports.proto").unwrap();
/// // The pool keeps the options, `operation_info` among them.
/// let pool = compiler.descriptor_pool();
/// let method = pool
///     .get_service_by_name("lro.v1.ReportsService").unwrap()
///     .methods().find(|m| m.name() == "BuildReport").unwrap();
/// let found = long_running(&method).unwrap().unwrap();
/// assert_eq!(found.response.full_name(), "lro.v1.Report");
/// assert_eq!(found.metadata.unwrap().full_name(), "lro.v1.BuildProgress");
/// # }
/// ```
pub fn long_running(method: &MethodDescriptor) -> Option<Result<LongRunning, String>> {
    if method.output().full_name() != OPERATION {
        return None;
    }
    let pool = method.parent_pool();
    let extension = pool
        .get_message_by_name("google.protobuf.MethodOptions")?
        .get_extension(OPERATION_INFO_EXTENSION)?;
    let options = method.options();
    if !options.has_extension(&extension) {
        return None;
    }
    let value = options.get_extension(&extension);
    let Value::Message(info) = value.as_ref() else {
        return None;
    };
    let text = |number: u32| {
        info.get_field_by_number(number)
            .and_then(|v| v.as_str().map(|s| s.trim().to_owned()))
            .unwrap_or_default()
    };
    let package = method.parent_service().package_name().to_owned();
    let resolve = |name: &str| -> Option<MessageDescriptor> {
        let name = name.trim_start_matches('.');
        if name.is_empty() {
            return None;
        }
        let in_package = (!package.is_empty())
            .then(|| pool.get_message_by_name(&format!("{package}.{name}")))
            .flatten();
        in_package.or_else(|| pool.get_message_by_name(name))
    };
    let response_type = text(1);
    let rpc = format!("{}/{}", method.parent_service().full_name(), method.name());
    if response_type.is_empty() {
        return Some(Err(format!(
            "{rpc} returns a google.longrunning.Operation but its operation_info names no response_type"
        )));
    }
    let Some(response) = resolve(&response_type) else {
        return Some(Err(format!(
            "{rpc}: operation_info.response_type `{response_type}` is not a message of the descriptor pool"
        )));
    };
    Some(Ok(LongRunning {
        response,
        metadata: resolve(&text(2)),
    }))
}
