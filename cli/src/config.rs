//! `--config FILE`: flags from a TOML file, under the command line and the
//! environment.
//!
//! A key is a long flag without its leading dashes (`grpc`,
//! `forward-header`, `proto-path` for `-I`); a switch takes `true` or
//! `false`, a repeatable flag a list or one value, any other flag a string
//! or a number. Keys at the top apply to whichever of `mcp` and `tools` has
//! the flag, so one file serves both; the tables `[mcp]` and `[tools]` hold
//! keys for one command, over the top's. The file becomes arguments after
//! the command line's, only for the flags that neither the command line nor
//! the environment set, so that clap checks its values as it checks theirs.
//! Of flags that exclude each other (`sources::ALTERNATIVES`), one set higher
//! drops the file's others.
//!
//! A relative path in the file (the value of a flag that takes a `FILE` or
//! a `DIR`: `proto`, `proto-path`, `descriptor-set`, `overlay`, the TLS
//! files, the caches, ...) is taken from the file's directory, not the
//! working directory, so that a file beside its protos works from
//! anywhere; a `proto` there without `proto-path` has its include directory
//! by the command line's rule, found in the file's directory. An error
//! about a path the file gave names the key and the file ([`note`]).
//!
//! The file holds no secrets: it is read by whoever can read it, and is
//! often committed. A key that names one (`backend-token`) and a URL with a
//! password in it are refused, naming the key and saying to give it by flag
//! or variable. A key no flag has is refused too, naming it and the file:
//! a typo is never silently ignored.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::ArgAction;
use clap::parser::ValueSource;

use crate::failure::Failure;
use crate::sources::{ALTERNATIVES, env_name};

/// Words that make a key a secret's, and where such a secret goes instead.
const SECRET_WORDS: [&str; 5] = ["secret", "token", "password", "credential", "private"];

/// The keys a secret might be written under, and the flags that take it.
const SECRET_HOMES: [(&str, &str); 2] = [
    (
        "backend-token",
        "`--backend-token-file FILE` or `--backend-token-env VAR`",
    ),
    ("oauth-client-secret", "`--oauth-client-secret-file FILE`"),
];

/// How a flag takes a value from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `true` or `false`.
    Switch,
    /// One value.
    One,
    /// A list, or one value.
    Many,
}

/// The arguments that `path` adds to the command line of the subcommand
/// `name` of `command`: `--flag=value` for each key whose flag `sources`
/// (where each flag got its value so far) does not hold, nor any of its
/// [`ALTERNATIVES`].
pub(crate) fn arguments(
    path: &Path,
    name: &str,
    command: &clap::Command,
    sources: &HashMap<String, ValueSource>,
) -> Result<Vec<OsString>, Failure> {
    let file = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("the config file {file}: {e}")))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| Failure::Usage(format!("the config file {file}: {e}")))?;
    let flags = |sub: &str| -> HashMap<String, Shape> {
        command
            .find_subcommand(sub)
            .into_iter()
            .flat_map(|sub| sub.get_arguments())
            .filter_map(|arg| {
                let long = arg.get_long()?;
                let shape = match arg.get_action() {
                    ArgAction::SetTrue => Shape::Switch,
                    ArgAction::Append => Shape::Many,
                    _ => Shape::One,
                };
                Some((long.to_owned(), shape))
            })
            .filter(|(long, _)| !matches!(long.as_str(), "help" | "version" | "config"))
            .collect()
    };
    let commands = ["mcp", "tools"];
    let paths = path_keys(command);
    // Where the file's relative paths are from.
    let base = path.parent().unwrap_or(Path::new(""));
    let of_command: HashMap<&str, HashMap<String, Shape>> =
        commands.iter().map(|sub| (*sub, flags(sub))).collect();
    let any_command: HashMap<String, Shape> = of_command
        .values()
        .flat_map(|flags| flags.iter().map(|(k, v)| (k.clone(), *v)))
        .collect();

    // The keys for this command: the top's it has, then its table's.
    let mut chosen: Vec<(String, &toml::Value)> = Vec::new();
    for (key, value) in &table {
        if let (true, toml::Value::Table(section)) = (commands.contains(&key.as_str()), value) {
            let known = of_command.get(key.as_str()).cloned().unwrap_or_default();
            for (inner, value) in section {
                check_key(&file, &format!("[{key}] "), inner, value, &known)?;
            }
            continue;
        }
        check_key(&file, "", key, value, &any_command)?;
        if of_command
            .get(name)
            .is_some_and(|flags| flags.contains_key(key))
        {
            chosen.push((key.clone(), value));
        }
    }
    if let Some(toml::Value::Table(section)) = table.get(name) {
        for (key, value) in section {
            chosen.retain(|(k, _)| k != key);
            chosen.push((key.clone(), value));
        }
    }

    let set_before = |long: &str| sources.contains_key(long);
    let resolve = |key: &str, text: String| -> String {
        if paths.contains(key) && Path::new(&text).is_relative() {
            base.join(&text).display().to_string()
        } else {
            text
        }
    };
    let mut arguments = Vec::new();
    for (key, value) in chosen {
        let taken = set_before(&key)
            || ALTERNATIVES
                .iter()
                .any(|group| group.contains(&key.as_str()) && group.iter().any(|l| set_before(l)));
        if taken {
            continue;
        }
        let shape = of_command
            .get(name)
            .and_then(|flags| flags.get(&key))
            .copied()
            .unwrap_or(Shape::One);
        let wrong = |what: &str| {
            Failure::Usage(format!(
                "the config file {file}: `{key}` takes {what}, not {} {}",
                proto_ai_tools_schema::names::article(value.type_str()),
                value.type_str()
            ))
        };
        match (shape, value) {
            (Shape::Switch, toml::Value::Boolean(true)) => {
                arguments.push(OsString::from(format!("--{key}")));
            }
            (Shape::Switch, toml::Value::Boolean(false)) => {}
            (Shape::Switch, _) => return Err(wrong("true or false")),
            (Shape::Many, toml::Value::Array(items)) => {
                for item in items {
                    let text = scalar(item).ok_or_else(|| wrong("a list of strings"))?;
                    let text = resolve(&key, text);
                    arguments.push(OsString::from(format!("--{key}={text}")));
                }
            }
            (_, value) => {
                let text = scalar(value).ok_or_else(|| {
                    wrong(if shape == Shape::Many {
                        "a string or a list of strings"
                    } else {
                        "a string or a number"
                    })
                })?;
                if key == "proto"
                    && !set_before("proto-path")
                    && !table.contains_key("proto-path")
                    && !table
                        .get(name)
                        .and_then(toml::Value::as_table)
                        .is_some_and(|section| section.contains_key("proto-path"))
                    && let Some(include) = default_include(base, &text)
                {
                    arguments.push(OsString::from(format!("--proto-path={include}")));
                }
                let text = resolve(&key, text);
                arguments.push(OsString::from(format!("--{key}={text}")));
            }
        }
    }
    Ok(arguments)
}

/// The long names of the flags that take a path: a value named `FILE` or
/// `DIR`, of either command (`config` aside, which the file cannot hold).
fn path_keys(command: &clap::Command) -> std::collections::HashSet<String> {
    command
        .get_subcommands()
        .flat_map(|sub| sub.get_arguments())
        .filter(|arg| {
            arg.get_value_names()
                .is_some_and(|names| names.iter().any(|n| *n == "FILE" || *n == "DIR"))
        })
        .filter_map(|arg| arg.get_long().map(str::to_owned))
        .filter(|long| long != "config")
        .collect()
}

/// The include directory of the file's relative `proto` (under `base`, the
/// file's directory), by `--proto`'s rule without `-I`: the path's first
/// directory (`protos` of `protos/shop/v1/shop.proto`), or `base` itself
/// for a bare file name. `None` where the command line's rule gives the
/// same already: an absolute `proto`, or a file in the working directory.
fn default_include(base: &Path, proto: &str) -> Option<String> {
    let proto = Path::new(proto);
    if proto.is_absolute() || base.as_os_str().is_empty() {
        return None;
    }
    let mut parts = proto.components();
    let include = match (parts.next(), parts.next()) {
        (Some(first), Some(_)) => base.join(first.as_os_str()),
        _ => base.to_path_buf(),
    };
    Some(include.display().to_string())
}

/// `message` (an error) with where a path in it came from when the config
/// file at `path` gave it relative: `` (`overlay = "tools.toml"` in the
/// config file ai-tools.toml, whose relative paths are taken from its
/// directory)``. `message` alone when it names no such path.
pub(crate) fn note(path: &Path, command: &clap::Command, message: String) -> String {
    let Some(table) = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
    else {
        return message;
    };
    let paths = path_keys(command);
    let base = path.parent().unwrap_or(Path::new(""));
    let sections = std::iter::once(&table).chain(
        ["mcp", "tools"]
            .iter()
            .filter_map(|sub| table.get(*sub).and_then(toml::Value::as_table)),
    );
    let mut given: Vec<(String, String, PathBuf)> = Vec::new();
    for section in sections {
        for (key, value) in section.iter().filter(|(key, _)| paths.contains(*key)) {
            let values: Vec<&str> = match value {
                toml::Value::String(text) => vec![text],
                toml::Value::Array(items) => items.iter().filter_map(toml::Value::as_str).collect(),
                _ => Vec::new(),
            };
            for text in values.into_iter().filter(|t| Path::new(t).is_relative()) {
                given.push((key.clone(), text.to_owned(), base.join(text)));
            }
        }
    }
    // The longest resolved path first: `protos/a.proto` before `protos`.
    given.sort_by_key(|(_, _, resolved)| std::cmp::Reverse(resolved.as_os_str().len()));
    match given
        .iter()
        .find(|(_, _, resolved)| message.contains(&resolved.display().to_string()))
    {
        Some((key, text, _)) => format!(
            "{message} (`{key} = {text:?}` in the config file {}, whose relative paths are taken from its directory)",
            path.display()
        ),
        None => message,
    }
}

/// A string or a number as a flag's value; else `None`.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(text) => Some(text.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        _ => None,
    }
}

/// A usage error for a key no flag of `known` has, or a secret.
fn check_key(
    file: &impl std::fmt::Display,
    table: &str,
    key: &str,
    value: &toml::Value,
    known: &HashMap<String, Shape>,
) -> Result<(), Failure> {
    let by_flag_or_env = |key: &str| format!("`--{key}` or `{}`", env_name(key));
    if known.contains_key(key) {
        if let Some(url) = url_with_password(value) {
            return Err(Failure::Usage(format!(
                "the config file {file}: `{table}{key}` holds a password in its URL ({url}); a config file holds no secrets: give it with {}",
                by_flag_or_env(key)
            )));
        }
        return Ok(());
    }
    if key == "config" {
        return Err(Failure::Usage(format!(
            "the config file {file}: `{table}config`: a config file cannot name another"
        )));
    }
    let lower = key.to_ascii_lowercase();
    if SECRET_WORDS.iter().any(|word| lower.contains(word)) {
        let home = SECRET_HOMES
            .iter()
            .find(|(name, _)| lower.replace('_', "-") == *name)
            .map_or(
                "a flag or an AI_TOOLS_ environment variable",
                |(_, home)| home,
            );
        return Err(Failure::Usage(format!(
            "the config file {file}: `{table}{key}` is a secret, and a config file holds no secrets (whoever reads the file reads them): give it with {home}"
        )));
    }
    let hint = [key.replace('_', "-"), key.to_ascii_lowercase()]
        .into_iter()
        .find(|fixed| known.contains_key(fixed))
        .map(|fixed| format!("; did you mean `{fixed}`?"))
        .unwrap_or_default();
    Err(Failure::Usage(format!(
        "the config file {file}: unknown key `{table}{key}`{hint} (the keys are the long flags without their leading dashes, e.g. `grpc`, `forward-header`, `proto-path` for -I, and the tables [mcp] and [tools])"
    )))
}

/// The first URL in `value` (a string or a list of them) with a password
/// in it (`scheme://user:password@host`), the password masked.
fn url_with_password(value: &toml::Value) -> Option<String> {
    let has_password = |text: &str| {
        let (scheme, rest) = text.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let (userinfo, host) = authority.rsplit_once('@')?;
        let (user, password) = userinfo.split_once(':')?;
        (!password.is_empty()).then(|| format!("{scheme}://{user}:***@{host}"))
    };
    match value {
        toml::Value::String(text) => has_password(text),
        toml::Value::Array(items) => items.iter().find_map(|item| match item {
            toml::Value::String(text) => has_password(text),
            _ => None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_url_is_found_and_masked() {
        let url = |text: &str| url_with_password(&toml::Value::String(text.to_owned()));
        assert_eq!(
            url("redis://:hunter2@cache:6379/0").as_deref(),
            Some("redis://:***@cache:6379")
        );
        assert_eq!(
            url("redis://user:pw@cache").as_deref(),
            Some("redis://user:***@cache")
        );
        assert_eq!(url("redis://user@cache"), None, "a user alone is no secret");
        assert_eq!(url("redis://cache:6379"), None);
        assert_eq!(
            url("https://h/path?next=a:b@c"),
            None,
            "an @ after the host"
        );
        let list = toml::Value::Array(vec![
            toml::Value::String("redis://a:1".into()),
            toml::Value::String("redis://u:p@b:2".into()),
        ]);
        assert_eq!(
            url_with_password(&list).as_deref(),
            Some("redis://u:***@b:2")
        );
    }
}
