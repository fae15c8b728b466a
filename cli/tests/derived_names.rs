//! The names whole-service mode derives on large real APIs as npm's
//! `google-proto-files` publishes them: Google Compute Engine v1 and the
//! second catalogue of `large_api.rs` (Cloud SQL Admin, Cloud Run v2,
//! Secret Manager, KMS, Pub/Sub, Cloud Tasks, Cloud Scheduler). None of
//! them needs the hash that shortens a name past 64 characters, and none
//! keeps a word it repeats (a `Service` suffix, a resource noun the method
//! names again) unless two methods would otherwise share a name.
//!
//! Run with `--nocapture` to see the longest names. Without the package the
//! tests are skipped, saying why, unless `AI_TOOLS_REQUIRE_NODE` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use proto_ai_tools::Toolkit;
use proto_ai_tools_tests::large_api::{CLOUD_MIX, COMPUTE, cloud_mix_toolkit, compute_toolkit};

/// Every tool name of `toolkit`, in its order.
fn names(toolkit: &Toolkit) -> Vec<String> {
    toolkit
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

/// The tools of `toolkit` whose name starts with their service's name in
/// full, `Service` suffix included (`secret_manager_service_…`).
fn with_the_suffix(toolkit: &Toolkit) -> Vec<String> {
    toolkit
        .tools()
        .iter()
        .filter(|t| {
            let Some(service) = t.toolset().and_then(|s| s.rsplit('.').next()) else {
                return false;
            };
            let full = proto_ai_tools::schema::overlay::derived_tool_name_in_full(service, "");
            service.ends_with("Service")
                && service != "Service"
                && t.name().starts_with(&format!("{full}_"))
        })
        .map(|t| t.name().to_owned())
        .collect()
}

/// Whether `name` ends as a name shortened to 64 characters does: `_`
/// and eight hexadecimal digits.
fn hashed(name: &str) -> bool {
    name.len() == 64
        && name.as_bytes()[55] == b'_'
        && name[56..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// The names of `toolkit` checked: none hashed, none with a `Service`
/// suffix, and the longest printed.
fn check(catalogue: &str, toolkit: &Toolkit) -> Vec<String> {
    let names = names(toolkit);
    let noisy = with_the_suffix(toolkit);
    assert!(
        noisy.is_empty(),
        "{catalogue}: names keep a `Service` suffix: {noisy:?}"
    );
    let hashed: Vec<&String> = names.iter().filter(|n| hashed(n)).collect();
    assert!(
        hashed.is_empty(),
        "{catalogue}: {} names need the hash to fit 64 characters: {hashed:?}",
        hashed.len()
    );
    let longest = names.iter().map(String::len).max().unwrap_or_default();
    let at: Vec<&String> = names.iter().filter(|n| n.len() == longest).collect();
    println!(
        "{catalogue}: {} tools, the longest name {longest} characters: {at:?}",
        names.len()
    );
    names
}

#[test]
fn no_compute_name_needs_a_hash() {
    let Some(tree) = support::published_tree(COMPUTE) else {
        return;
    };
    let names = check("compute", &compute_toolkit(&tree));
    // The names the rule shortens most often, as the catalogue has them.
    for name in [
        "instances_get",
        "instances_list",
        "global_operations_wait",
        "instance_settings_get",
        // Still too long: the service's longest word shortened.
        "org_security_policies_list_preconfigured_expression_sets",
    ] {
        assert!(names.iter().any(|n| n == name), "compute has `{name}`");
    }
}

#[test]
fn no_name_of_the_second_catalogue_needs_a_hash() {
    let Some(tree) = support::published_tree(CLOUD_MIX[0]) else {
        return;
    };
    let names = check("cloud_mix", &cloud_mix_toolkit(&tree));
    for name in [
        // `Services.CreateService`: the noun the method repeats.
        "services_create",
        // `SqlInstancesService.List`: the `Service` suffix.
        "sql_instances_list",
        // `SecretManagerService.AccessSecretVersion`.
        "secret_manager_access_secret_version",
        // `KeyManagementService.CreateCryptoKey`.
        "key_management_create_crypto_key",
        // 69 characters before, now 60.
        "key_management_import_trusted_key_wrapped_crypto_key_version",
        // `SqlBackupsService.GetBackup`: the service's last noun.
        "sql_backups_get",
        // `Publisher.CreateTopic`: nothing repeats.
        "publisher_create_topic",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "the catalogue has `{name}`"
        );
    }
}
