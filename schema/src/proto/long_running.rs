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
/// use proto_ai_tools_schema::proto::long_running;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::compile_files;

    /// A minimal `google.longrunning` (what a long-running method needs of
    /// googleapis' `operations.proto`).
    const OPERATIONS: &str = r#"syntax = "proto3";
package google.longrunning;
import "google/protobuf/any.proto";
import "google/protobuf/descriptor.proto";
extend google.protobuf.MethodOptions { OperationInfo operation_info = 1049; }
message Operation { string name = 1; google.protobuf.Any metadata = 2; bool done = 3; }
message OperationInfo { string response_type = 1; string metadata_type = 2; }
"#;

    /// `rpc`'s verdict in a file of package `p.v1` that declares `Done` and
    /// imports `other.proto` (package `q`, declaring `Done` and `Progress`).
    fn verdict(rpc: &str) -> Option<Result<(String, Option<String>), String>> {
        let main = format!(
            r#"syntax = "proto3";
package p.v1;
import "google/longrunning/operations.proto";
import "google/protobuf/empty.proto";
import "other.proto";
message Done {{}}
message Request {{}}
message Plain {{}}
service S {{
{rpc}
}}
"#
        );
        let other = "syntax = \"proto3\";\npackage q;\nmessage Done {}\nmessage Progress {}\n";
        let pool = compile_files(
            &[
                ("google/longrunning/operations.proto", OPERATIONS),
                ("other.proto", other),
                ("main.proto", &main),
            ],
            "main.proto",
        );
        let method = pool
            .get_service_by_name("p.v1.S")
            .and_then(|s| s.methods().next())
            .expect("the rpc");
        long_running(&method).map(|found| {
            found.map(|lro| {
                (
                    lro.response.full_name().to_owned(),
                    lro.metadata.map(|m| m.full_name().to_owned()),
                )
            })
        })
    }

    fn found(
        response: &str,
        metadata: Option<&str>,
    ) -> Option<Result<(String, Option<String>), String>> {
        Some(Ok((response.to_owned(), metadata.map(str::to_owned))))
    }

    #[test]
    fn a_bare_name_is_the_methods_package_and_a_dotted_one_is_absolute() {
        let rpc = r#"rpc M(Request) returns (google.longrunning.Operation) {
  option (google.longrunning.operation_info) = { response_type: "Done" metadata_type: "q.Progress" };
}"#;
        assert_eq!(verdict(rpc), found("p.v1.Done", Some("q.Progress")));
        let rpc = r#"rpc M(Request) returns (google.longrunning.Operation) {
  option (google.longrunning.operation_info) = { response_type: ".q.Done" };
}"#;
        assert_eq!(verdict(rpc), found("q.Done", None));
        let rpc = r#"rpc M(Request) returns (google.longrunning.Operation) {
  option (google.longrunning.operation_info) = { response_type: "google.protobuf.Empty" metadata_type: "Nowhere" };
}"#;
        // A metadata type the pool lacks is left out, not an error.
        assert_eq!(verdict(rpc), found("google.protobuf.Empty", None));
    }

    #[test]
    fn only_an_operation_with_operation_info_is_long_running() {
        assert_eq!(
            verdict("rpc M(Request) returns (google.longrunning.Operation);"),
            None
        );
        let rpc = r#"rpc M(Request) returns (Plain) {
  option (google.longrunning.operation_info) = { response_type: "Done" };
}"#;
        assert_eq!(verdict(rpc), None);
    }

    #[test]
    fn a_response_type_that_is_missing_or_unknown_says_so() {
        let rpc = r#"rpc M(Request) returns (google.longrunning.Operation) {
  option (google.longrunning.operation_info) = { metadata_type: "Done" };
}"#;
        let Some(Err(why)) = verdict(rpc) else {
            panic!("no response_type is an error")
        };
        assert!(
            why.contains("p.v1.S/M") && why.contains("no response_type"),
            "{why}"
        );
        let rpc = r#"rpc M(Request) returns (google.longrunning.Operation) {
  option (google.longrunning.operation_info) = { response_type: "Nowhere" };
}"#;
        let Some(Err(why)) = verdict(rpc) else {
            panic!("an unknown response_type is an error")
        };
        assert!(why.contains("`Nowhere`"), "{why}");
    }
}
