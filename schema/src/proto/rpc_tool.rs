//! Which `rpc_tool` a method carries: the annotation is declared under two
//! numbers (one per package), and both the reading of annotations and the
//! location of a method's diagnostics ask which of them a pool declares and
//! a method carries.

use prost_reflect::{DescriptorPool, ExtensionDescriptor, MethodDescriptor};

use crate::annotation_protos::{RPC_TOOL_EXTENSION, RPC_TOOL_EXTENSIONS};

/// The `rpc_tool` extensions `pool` declares, whichever package declares
/// them: those of [`RPC_TOOL_EXTENSIONS`] it has, in that order
/// (`ai.context.v1.rpc_tool`, 52104, then `ai.tools.v1.rpc_tool`, 52106, as
/// the shipped protos declare them). Empty when no file of `pool` declares
/// either.
///
/// # Examples
///
/// ```
/// # let pool = prost_reflect::DescriptorPool::global();
/// // The global pool declares no annotation.
/// assert!(proto_ai_tools_schema::proto::rpc_tool_extensions(&pool).is_empty());
/// ```
pub fn rpc_tool_extensions(pool: &DescriptorPool) -> Vec<ExtensionDescriptor> {
    let Some(options) = pool.get_message_by_name("google.protobuf.MethodOptions") else {
        return Vec::new();
    };
    RPC_TOOL_EXTENSIONS
        .iter()
        .filter_map(|number| options.get_extension(*number))
        .collect()
}

/// The one of `rpc_tools` (the `rpc_tool` extensions a pool declares, from
/// [`rpc_tool_extensions`]) that `method` carries an option of, the first
/// when it carries both; `None` when it carries none.
pub(crate) fn carried<'a>(
    method: &MethodDescriptor,
    rpc_tools: &'a [ExtensionDescriptor],
) -> Option<&'a ExtensionDescriptor> {
    let options = method.options();
    rpc_tools.iter().find(|ext| options.has_extension(ext))
}

/// The number of the `rpc_tool` option `method` carries, the first of
/// [`RPC_TOOL_EXTENSIONS`] when it carries both: where its diagnostics are
/// located. [`RPC_TOOL_EXTENSION`] when it carries none.
pub(crate) fn rpc_tool_number(method: &MethodDescriptor) -> u32 {
    carried(method, &rpc_tool_extensions(method.parent_pool()))
        .map_or(RPC_TOOL_EXTENSION, ExtensionDescriptor::number)
}
