//! Large real APIs for the tests and benches of tool search, as npm's
//! `google-proto-files` publishes them: Google Compute Engine v1 and a
//! mixed catalogue of seven other Google APIs, every service exposed whole;
//! the baseline a search must beat, and the figures a ranking is measured
//! by over labelled requests.

use std::path::Path;

use proto_ai_tools::Toolkit;
use proto_ai_tools::tool_set::{ToolSet, ToolSetOptions};
use proto_ai_tools::transport::InProcessTransport;

/// Compute Engine v1, under the package's tree.
pub const COMPUTE: &str = "google/cloud/compute/v1/compute.proto";

/// The second catalogue: the files of seven Google APIs other than
/// Compute that declare their services (Cloud SQL Admin v1, Cloud Run v2,
/// Secret Manager v1, Cloud KMS v1, Pub/Sub v1, Cloud Tasks v2, Cloud
/// Scheduler v1), under the package's tree.
pub const CLOUD_MIX: &[&str] = &[
    "google/cloud/sql/v1/cloud_sql_backup_runs.proto",
    "google/cloud/sql/v1/cloud_sql_backups.proto",
    "google/cloud/sql/v1/cloud_sql_connect.proto",
    "google/cloud/sql/v1/cloud_sql_databases.proto",
    "google/cloud/sql/v1/cloud_sql_flags.proto",
    "google/cloud/sql/v1/cloud_sql_instances.proto",
    "google/cloud/sql/v1/cloud_sql_operations.proto",
    "google/cloud/sql/v1/cloud_sql_ssl_certs.proto",
    "google/cloud/sql/v1/cloud_sql_tiers.proto",
    "google/cloud/sql/v1/cloud_sql_users.proto",
    "google/cloud/run/v2/build.proto",
    "google/cloud/run/v2/execution.proto",
    "google/cloud/run/v2/instance.proto",
    "google/cloud/run/v2/job.proto",
    "google/cloud/run/v2/revision.proto",
    "google/cloud/run/v2/service.proto",
    "google/cloud/run/v2/task.proto",
    "google/cloud/run/v2/worker_pool.proto",
    "google/cloud/secretmanager/v1/service.proto",
    "google/cloud/kms/v1/autokey.proto",
    "google/cloud/kms/v1/autokey_admin.proto",
    "google/cloud/kms/v1/ekm_service.proto",
    "google/cloud/kms/v1/hsm_management.proto",
    "google/cloud/kms/v1/service.proto",
    "google/pubsub/v1/pubsub.proto",
    "google/pubsub/v1/schema.proto",
    "google/cloud/tasks/v2/cloudtasks.proto",
    "google/cloud/scheduler/v1/cloudscheduler.proto",
];

/// The services of [`CLOUD_MIX`], as `--service` globs.
pub const CLOUD_MIX_SERVICES: &[&str] = &[
    "google.cloud.sql.v1.*",
    "google.cloud.run.v2.*",
    "google.cloud.secretmanager.v1.*",
    "google.cloud.kms.v1.*",
    "google.pubsub.v1.*",
    "google.cloud.tasks.v2.*",
    "google.cloud.scheduler.v1.*",
];

/// Every service of Compute Engine v1 under `tree` (the package's root) as
/// tools, in a toolkit whose calls go nowhere.
///
/// # Panics
///
/// When the proto does not compile or its tools do not build: a fixture
/// that is broken stops the test.
pub fn compute_toolkit(tree: &Path) -> Toolkit {
    toolkit_of(tree, &[COMPUTE], &["google.cloud.compute.v1.*"])
}

/// Every service of the [`CLOUD_MIX`] catalogue under `tree` as tools, in a
/// toolkit whose calls go nowhere.
///
/// # Panics
///
/// As [`compute_toolkit`].
pub fn cloud_mix_toolkit(tree: &Path) -> Toolkit {
    toolkit_of(tree, CLOUD_MIX, CLOUD_MIX_SERVICES)
}

/// The `services` (globs) of `files` under `tree`, compiled by protox with
/// their source info, as tools in a toolkit whose calls go nowhere.
#[allow(clippy::expect_used)]
fn toolkit_of(tree: &Path, files: &[&str], services: &[&str]) -> Toolkit {
    let mut compiler =
        protox::Compiler::with_file_resolver(proto_ai_tools_schema::proto_resolver(&[
            tree.to_owned()
        ]));
    compiler.include_imports(true).include_source_info(true);
    for file in files {
        compiler
            .open_file(file)
            .unwrap_or_else(|e| panic!("{file} compiles as published: {e}"));
    }
    let options = services
        .iter()
        .fold(ToolSetOptions::new(), |options, service| {
            options.service(*service)
        });
    let set = ToolSet::from_descriptor_set(&compiler.encode_file_descriptor_set(), &options)
        .expect("every tool builds and checks");
    Toolkit::builder()
        .generated(set.executor(InProcessTransport::new()))
        .build()
        .expect("a toolkit")
}

/// The baseline of tool search: the indexes of `names` ranked by how many
/// words of `text` (of three letters or more) they contain, ties in list
/// order; names with none left out.
pub fn substring_ranking(names: &[String], text: &str) -> Vec<usize> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                words.iter().filter(|w| name.contains(w.as_str())).count(),
                i,
            )
        })
        .filter(|(hits, _)| *hits > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| i).collect()
}

/// A labelled request: what a user asks, and the name of the tool that
/// serves it.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// The request, in a user's words.
    pub text: String,
    /// The tool that serves it.
    pub tool: String,
}

/// The requests of a file of `[[request]]` tables (`text`, and `method` as
/// `package.Service/Method`), each labelled with the name of `toolkit`'s
/// tool for its method: the labels hold whatever the tools are named.
///
/// # Panics
///
/// When the file does not parse or names a method that is no tool.
#[allow(clippy::expect_used)]
pub fn labelled_requests(toolkit: &Toolkit, file: &Path) -> Vec<Labelled> {
    #[derive(serde::Deserialize)]
    struct Requests {
        request: Vec<Request>,
    }
    #[derive(serde::Deserialize)]
    struct Request {
        text: String,
        method: String,
    }
    let text = std::fs::read_to_string(file).expect("the labelled requests");
    let requests: Requests = toml::from_str(&text).expect("the labelled requests parse");
    requests
        .request
        .into_iter()
        .map(|r| {
            let tool = toolkit
                .tools()
                .iter()
                .find(|t| {
                    t.agent_tool().is_some_and(|a| {
                        format!("{}/{}", a.method.service, a.method.method) == r.method
                    })
                })
                .map(|t| t.name().to_owned())
                .unwrap_or_else(|| panic!("{} is a tool", r.method));
            Labelled { text: r.text, tool }
        })
        .collect()
}

/// How well a ranking finds the labelled tools.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// The share of requests whose tool is ranked first.
    pub recall_at_1: f64,
    /// The share of requests whose tool is in the first five.
    pub recall_at_5: f64,
    /// The mean of 1/rank (0 where the tool is not ranked at all).
    pub mrr: f64,
    /// The requests whose tool is not in the first five, with its rank.
    pub misses: Vec<String>,
}

/// The [`Figures`] of `ranking` (a request's text → tool names, best
/// first) over `requests`.
pub fn measure(requests: &[Labelled], ranking: impl Fn(&str) -> Vec<String>) -> Figures {
    let (mut at1, mut at5, mut reciprocal) = (0usize, 0usize, 0.0);
    let mut misses = Vec::new();
    for request in requests {
        let ranked = ranking(&request.text);
        match ranked
            .iter()
            .position(|n| *n == request.tool)
            .map(|i| i + 1)
        {
            Some(rank) => {
                at1 += usize::from(rank == 1);
                at5 += usize::from(rank <= 5);
                if rank > 5 {
                    misses.push(format!("{} at {rank}: {}", request.tool, request.text));
                }
                reciprocal += 1.0 / rank as f64;
            }
            None => misses.push(format!("{} not found: {}", request.tool, request.text)),
        }
    }
    let n = requests.len().max(1) as f64;
    Figures {
        recall_at_1: at1 as f64 / n,
        recall_at_5: at5 as f64 / n,
        mrr: reciprocal / n,
        misses,
    }
}
