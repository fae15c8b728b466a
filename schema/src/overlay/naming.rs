//! The names whole-service mode derives for methods: `service_method` in
//! snake case, without the words that repeat, fitted to 64 characters.

use crate::names::MAX_TOOL_NAME_LEN;

/// The tool name whole-service mode gives a method: `service_method` in
/// snake case, without the words that repeat, a letter first, at most 64
/// characters.
///
/// Two kinds of word are dropped, each only when something remains:
///
/// - a `Service` suffix of the service name (`SecretManagerService` →
///   `secret_manager`, `SqlInstancesService.List` → `sql_instances_list`);
/// - the service's resource noun where the method name repeats it, at
///   its start or as the object of its verb, right after its first word:
///   the service name's last words (the most that match), singular or
///   plural alike (`google.longrunning.Operations.ListOperations` →
///   `operations_list`, `Services.CreateService` → `services_create`,
///   `SqlBackupsService.GetBackup` → `sql_backups_get`,
///   `SchemaService.ListSchemaRevisions` → `schema_list_revisions`,
///   etcd's `Lease.LeaseGrant` → `lease_grant`). A noun further in is
///   part of another (`Instances.GetShieldedInstanceIdentity` keeps its
///   words).
///
/// A name still longer than 64 characters shortens the words of its
/// service part to their first three letters, the longest first, until it
/// fits (`OrganizationSecurityPolicies.ListPreconfiguredExpressionSets` →
/// `org_security_policies_list_preconfigured_expression_sets`); one that
/// does not fit even so keeps its start and ends in a hash of the whole, so
/// it stays unique and stable.
///
/// Where two methods of the services [`annotate`](super::annotate) exposes derive one name
/// (or a method derives a name the proto or the overlay gives another),
/// each of them keeps the words it dropped: it is named by
/// [`derived_tool_name_in_full`] instead. So no name depends on which of
/// them is declared first. A name given by `rpc_tool.name` or an overlay
/// entry is never derived.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::overlay::derived_tool_name;
/// assert_eq!(derived_tool_name("Operations", "ListOperations"), "operations_list");
/// assert_eq!(derived_tool_name("Services", "CreateService"), "services_create");
/// assert_eq!(derived_tool_name("SqlInstancesService", "List"), "sql_instances_list");
/// // Nothing would remain of the method, or of the service.
/// assert_eq!(derived_tool_name("Books", "Book"), "books_book");
/// assert_eq!(derived_tool_name("Service", "Get"), "service_get");
/// assert_eq!(derived_tool_name("KV", "Range"), "kv_range");
/// assert_eq!(derived_tool_name("_Internal", "V2Get"), "internal_v2_get");
/// let long = derived_tool_name(&"VeryLongServiceName".repeat(3), &"AndAnEvenLongerMethodName".repeat(2));
/// assert_eq!(long.len(), 64);
/// assert!(proto_ai_tools_schema::names::validate_tool_name(&long).is_ok());
/// ```
pub fn derived_tool_name(service: &str, method: &str) -> String {
    let mut service = words(service);
    if service.len() > 1 && service.last().is_some_and(|w| w == "service") {
        service.pop();
    }
    let mut method = words(method);
    if let Some((at, len)) = repeated_noun(&service, &method) {
        method.drain(at..at + len);
    }
    fitted(service, method)
}

/// The tool name whole-service mode gives a method whose
/// [`derived_tool_name`] another method derives too: every word kept
/// (`Operations.ListOperations` → `operations_list_operations`), shortened
/// past 64 characters as `derived_tool_name` shortens.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::overlay::derived_tool_name_in_full;
/// assert_eq!(derived_tool_name_in_full("Operations", "ListOperations"), "operations_list_operations");
/// assert_eq!(derived_tool_name_in_full("SecretManagerService", "GetSecret"), "secret_manager_service_get_secret");
/// ```
pub fn derived_tool_name_in_full(service: &str, method: &str) -> String {
    fitted(words(service), words(method))
}

/// The snake-case words of a proto name (`ListOperations` → `list`,
/// `operations`).
fn words(name: &str) -> Vec<String> {
    snake_case(name)
        .split('_')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Where `method` repeats the service's resource noun: the last words of
/// `service` (as many as match, at least one; its last word singular or
/// plural alike), first in `method` or else right after its first word
/// (its verb), with some word of `method` left beside them. The place and
/// how many words they are.
fn repeated_noun(service: &[String], method: &[String]) -> Option<(usize, usize)> {
    let at = |start: usize| {
        (1..=service.len()).rev().find(|&k| {
            let noun = &service[service.len() - k..];
            method.len() > k
                && method.get(start..start + k).is_some_and(|run| {
                    run[..k - 1] == noun[..k - 1] && same_noun(&run[k - 1], &noun[k - 1])
                })
        })
    };
    at(0).map(|k| (0, k)).or_else(|| at(1).map(|k| (1, k)))
}

/// Whether two words are one noun, singular or plural (`service`,
/// `services`; `policy`, `policies`; `address`, `addresses`).
pub(super) fn same_noun(a: &str, b: &str) -> bool {
    let plural_of = |one: &str, many: &str| {
        many.strip_suffix('s')
            .is_some_and(|stem| stem == one || stem.strip_suffix('e') == Some(one))
            || many.strip_suffix("ies").is_some_and(|stem| {
                one.strip_suffix('y').is_some_and(|o| o == stem) && !stem.is_empty()
            })
    };
    a == b || plural_of(a, b) || plural_of(b, a)
}

/// `service` and `method` joined into a tool name of at most 64
/// characters, a letter first (see [`derived_tool_name`]).
fn fitted(mut service: Vec<String>, method: Vec<String>) -> String {
    let join = |service: &[String]| {
        let name = service
            .iter()
            .chain(&method)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("_");
        let name = name.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
        if name.is_empty() {
            "tool".to_owned()
        } else {
            name.to_owned()
        }
    };
    let whole = join(&service);
    let mut name = whole.clone();
    while name.len() > MAX_TOOL_NAME_LEN {
        // The longest word of the service part, the first of equals.
        let longest = service
            .iter()
            .enumerate()
            .filter(|(_, w)| w.len() > 3)
            .max_by(|(i, a), (j, b)| a.len().cmp(&b.len()).then(j.cmp(i)))
            .map(|(i, _)| i);
        let Some(i) = longest else { break };
        service[i].truncate(3);
        name = join(&service);
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        // FNV-1a: stable across builds and platforms.
        let hash = whole.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        name = whole;
        name.truncate(MAX_TOOL_NAME_LEN - 9);
        name = format!("{name}_{:08x}", hash & 0xffff_ffff);
    }
    name
}

pub(super) fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
}
