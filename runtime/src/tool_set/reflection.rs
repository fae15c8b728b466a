//! A [`ToolSet`] from a live server's gRPC reflection (feature
//! `reflection`): `grpc.reflection.v1`, falling back to `v1alpha` for
//! servers that only speak the older one.

use std::collections::{BTreeMap, HashSet};

use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::prost_types::FileDescriptorProto;
use tonic::transport::Channel;

use super::{ToolSet, ToolSetError, ToolSetOptions};

/// How reflection went wrong, before any tool is built.
fn failed(what: impl std::fmt::Display) -> ToolSetError {
    ToolSetError {
        problems: vec![format!("gRPC reflection failed: {what}")],
    }
}

/// One reflection protocol version: the same messages in two packages.
macro_rules! fetch_files {
    ($name:ident, $($pb:ident)::+) => {
        /// Every file the server's services need, by name, as encoded
        /// `FileDescriptorProto`s; `progress` hears the count as it grows.
        async fn $name(
            channel: Channel,
            progress: &(dyn Fn(usize) + Send + Sync),
        ) -> Result<BTreeMap<String, Vec<u8>>, tonic::Status> {
            use $($pb)::+ as pb;
            use pb::server_reflection_client::ServerReflectionClient;
            use pb::server_reflection_request::MessageRequest;
            use pb::server_reflection_response::MessageResponse;

            let client = ServerReflectionClient::new(channel);
            // One request per stream: simple, and servers answer each alike.
            let ask = |request: MessageRequest| {
                let mut client = client.clone();
                async move {
                    let request = pb::ServerReflectionRequest {
                        host: String::new(),
                        message_request: Some(request),
                    };
                    let mut answers = client
                        .server_reflection_info(tonic::codegen::tokio_stream::iter([request]))
                        .await?
                        .into_inner();
                    let answer = answers.message().await?.ok_or_else(|| {
                        tonic::Status::unavailable("the reflection service ended the stream without an answer")
                    })?;
                    match answer.message_response {
                        Some(MessageResponse::ErrorResponse(e)) => {
                            Err(tonic::Status::new(tonic::Code::from_i32(e.error_code), e.error_message))
                        }
                        Some(response) => Ok(response),
                        None => Err(tonic::Status::internal("an empty reflection answer")),
                    }
                }
            };
            let MessageResponse::ListServicesResponse(listed) =
                ask(MessageRequest::ListServices(String::new())).await?
            else {
                return Err(tonic::Status::internal("list_services was answered with something else"));
            };
            // Each request with the file that imports what it asks for.
            let mut wanted: Vec<(MessageRequest, Option<String>)> = listed
                .service
                .into_iter()
                .filter(|s| !s.name.starts_with("grpc.reflection."))
                .map(|s| (MessageRequest::FileContainingSymbol(s.name), None))
                .collect();
            let mut asked: HashSet<String> = HashSet::new();
            let mut files = BTreeMap::new();
            while let Some((request, importer)) = wanted.pop() {
                let lacking = match (&request, importer) {
                    (MessageRequest::FileByFilename(name), Some(importer)) => {
                        Some((name.clone(), importer))
                    }
                    _ => None,
                };
                let answer = ask(request).await.map_err(|status| match lacking {
                    Some((name, importer)) => tonic::Status::new(
                        status.code(),
                        format!(
                            "the server did not send `{name}`, which `{importer}` imports: {}",
                            status.message()
                        ),
                    ),
                    None => status,
                })?;
                let MessageResponse::FileDescriptorResponse(found) = answer else {
                    return Err(tonic::Status::internal("a file request was answered with something else"));
                };
                for bytes in found.file_descriptor_proto {
                    let file = FileDescriptorProto::decode(bytes.as_slice()).map_err(|e| {
                        tonic::Status::internal(format!("a file descriptor does not decode: {e}"))
                    })?;
                    let name = file.name().to_owned();
                    if files.contains_key(&name) {
                        continue;
                    }
                    for dependency in &file.dependency {
                        if !files.contains_key(dependency) && asked.insert(dependency.clone()) {
                            wanted.push((
                                MessageRequest::FileByFilename(dependency.clone()),
                                Some(name.clone()),
                            ));
                        }
                    }
                    files.insert(name, bytes);
                    progress(files.len());
                }
            }
            Ok(files)
        }
    };
}

fetch_files!(fetch_v1, tonic_reflection::pb::v1);
fetch_files!(fetch_v1alpha, tonic_reflection::pb::v1alpha);

/// `files` as an encoded `FileDescriptorSet`, each file after those it
/// imports.
fn descriptor_set(files: &BTreeMap<String, Vec<u8>>) -> Result<Vec<u8>, ToolSetError> {
    let mut ordered: Vec<&str> = Vec::with_capacity(files.len());
    let mut placed: HashSet<&str> = HashSet::new();
    fn place<'a>(
        name: &'a str,
        files: &'a BTreeMap<String, Vec<u8>>,
        placed: &mut HashSet<&'a str>,
        ordered: &mut Vec<&'a str>,
        depth: usize,
    ) -> Result<(), ToolSetError> {
        if placed.contains(name) {
            return Ok(());
        }
        let Some((key, bytes)) = files.get_key_value(name) else {
            return Err(failed(format!(
                "the server did not send `{name}`, which another file imports"
            )));
        };
        if depth > files.len() {
            return Err(failed(format!(
                "`{name}` imports itself through other files"
            )));
        }
        let file = FileDescriptorProto::decode(bytes.as_slice()).map_err(failed)?;
        for dependency in &file.dependency {
            let dependency = files
                .get_key_value(dependency)
                .map(|(k, _)| k.as_str())
                .ok_or_else(|| {
                    failed(format!(
                        "the server did not send `{dependency}`, which `{name}` imports"
                    ))
                })?;
            place(dependency, files, placed, ordered, depth + 1)?;
        }
        placed.insert(key.as_str());
        ordered.push(key.as_str());
        Ok(())
    }
    for name in files.keys() {
        place(name, files, &mut placed, &mut ordered, 0)?;
    }
    let mut set = Vec::new();
    for name in ordered {
        let bytes = &files[name];
        encode_key(1, WireType::LengthDelimited, &mut set);
        encode_varint(bytes.len() as u64, &mut set);
        set.extend_from_slice(bytes);
    }
    Ok(set)
}

impl ToolSet {
    /// The tools of a live server, from its gRPC reflection service (v1,
    /// else v1alpha): every file its services need is fetched, then built as
    /// [`from_descriptor_set`](Self::from_descriptor_set) builds it.
    /// `progress` hears the count of files fetched so far (a large server
    /// takes a while).
    ///
    /// The whole exchange, connecting included, must end within
    /// [`ToolSetOptions::reflection_timeout`] (by default
    /// [`DEFAULT_REFLECTION_TIMEOUT`](crate::tool_set::DEFAULT_REFLECTION_TIMEOUT), 30
    /// seconds): a server that accepts the connection and never answers is
    /// an error, not a hang.
    ///
    /// # Errors
    ///
    /// A server that does not answer (or not within the timeout), has no
    /// reflection service, or lacks a file another one imports; then every
    /// problem of [`from_descriptor_set`](Self::from_descriptor_set).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use proto_ai_tools::{tool_set::{ToolSet, ToolSetOptions}, transport::TonicTransport};
    /// let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect_lazy();
    /// let set = ToolSet::from_reflection(channel.clone(), &ToolSetOptions::new(), &|files| {
    ///     eprintln!("{files} files fetched");
    /// })
    /// .await?;
    /// let executor = set.executor(TonicTransport::new(channel));
    /// # let _ = executor;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn from_reflection(
        channel: Channel,
        options: &ToolSetOptions,
        progress: &(dyn Fn(usize) + Send + Sync),
    ) -> Result<Self, ToolSetError> {
        let timeout = options.reflection_timeout;
        let files = tokio::time::timeout(timeout, fetch(channel, progress))
            .await
            .map_err(|_| {
                failed(format!(
                    "the server did not answer in full within {timeout:?}, the reflection \
                     timeout (ToolSetOptions::reflection_timeout)"
                ))
            })??;
        Self::from_descriptor_set(&descriptor_set(&files)?, options)
    }
}

/// Every file the server's services need: by v1, else by v1alpha.
async fn fetch(
    channel: Channel,
    progress: &(dyn Fn(usize) + Send + Sync),
) -> Result<BTreeMap<String, Vec<u8>>, ToolSetError> {
    Ok(match fetch_v1(channel.clone(), progress).await {
        Ok(files) => files,
        Err(status) if status.code() == tonic::Code::Unimplemented => {
            fetch_v1alpha(channel, progress).await.map_err(|status| {
                failed(format!(
                    "neither grpc.reflection.v1 nor v1alpha answered: {} ({:?})",
                    status.message(),
                    status.code()
                ))
            })?
        }
        Err(status) => {
            return Err(failed(format!(
                "{} ({:?})",
                status.message(),
                status.code()
            )));
        }
    })
}
