//! The naming rules: tool names, alias prefixes and the syntax of aliases.
//!
//! These are the one home of those rules; the proto reader, the derive and the
//! runtime all call them.

/// Appends `token` to the JSON pointer `pointer`, escaped as RFC 6901 asks
/// (`~` as `~0`, `/` as `~1`): the one escaping of property, map-key and
/// definition names in the pointers this crate writes.
pub(crate) fn push_pointer_token(pointer: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Longest tool name every provider accepts.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Checks a tool name against `^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`.
///
/// That is the intersection of what OpenAI (`^[a-zA-Z0-9_-]{1,64}$`),
/// Anthropic (the same) and Gemini (starts with a letter or `_`, then
/// `a-zA-Z0-9_.:-`, at most 64) accept.
///
/// The error is a sentence fragment (lowercase, no trailing period) saying
/// what is wrong and how to fix it.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::names::validate_tool_name;
///
/// assert!(validate_tool_name("links_create").is_ok());
/// assert!(validate_tool_name("1links").is_err());
/// assert!(validate_tool_name("links.create").is_err());
/// ```
pub fn validate_tool_name(name: &str) -> Result<(), String> {
    let Some(first) = name.chars().next() else {
        return Err("tool name is empty; use a name matching `^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`, e.g. `links_create`".into());
    };
    if !first.is_ascii_alphabetic() {
        return Err(format!(
            "tool name `{name}` must start with an ASCII letter; rename it to match `^[a-zA-Z][a-zA-Z0-9_-]{{0,63}}$`"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "tool name `{name}` contains `{bad}`; use only ASCII letters, digits, `_` and `-` (`^[a-zA-Z][a-zA-Z0-9_-]{{0,63}}$`)"
        ));
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "tool name `{name}` is {} characters long; shorten it to at most {MAX_TOOL_NAME_LEN}",
            name.len()
        ));
    }
    Ok(())
}

/// Checks an alias prefix against `^[a-z][a-z0-9_]*$`.
///
/// Aliases are `PREFIX-N`; the prefix must not contain `-`, so that the
/// number can be split off unambiguously.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::names::validate_alias_prefix;
///
/// assert!(validate_alias_prefix("link").is_ok());
/// assert!(validate_alias_prefix("page_theme").is_ok());
/// assert!(validate_alias_prefix("Link").is_err());
/// assert!(validate_alias_prefix("link-id").is_err());
/// ```
pub fn validate_alias_prefix(prefix: &str) -> Result<(), String> {
    if is_alias_prefix(prefix) {
        return Ok(());
    }
    let Some(first) = prefix.chars().next() else {
        return Err(
            "alias prefix is empty; use a lowercase word matching `^[a-z][a-z0-9_]*$`, e.g. `link`"
                .into(),
        );
    };
    if !first.is_ascii_lowercase() {
        return Err(format!(
            "alias prefix `{prefix}` must start with a lowercase ASCII letter; use one matching `^[a-z][a-z0-9_]*$`, e.g. `link`"
        ));
    }
    if let Some(bad) = prefix
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
    {
        return Err(format!(
            "alias prefix `{prefix}` contains `{bad}`; use only lowercase ASCII letters, digits and `_` (`^[a-z][a-z0-9_]*$`)"
        ));
    }
    Ok(())
}

/// Whether `prefix` matches `^[a-z][a-z0-9_]*$` (see [`validate_alias_prefix`]
/// for the error that says why not).
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::names::is_alias_prefix;
/// assert!(is_alias_prefix("page_theme") && !is_alias_prefix("link-id"));
/// ```
pub fn is_alias_prefix(prefix: &str) -> bool {
    let mut bytes = prefix.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'))
}

/// The alias `PREFIX-N`.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_schema::names::alias("link", 3), "link-3");
/// ```
pub fn alias(prefix: &str, number: u64) -> String {
    let mut text = String::with_capacity(prefix.len() + 4);
    write_alias(&mut text, prefix, number);
    text
}

/// Appends the alias `PREFIX-N` to `out`: [`alias`] without a new `String`,
/// for writers that give out many.
///
/// # Examples
///
/// ```
/// let mut out = String::from("[");
/// proto_ai_tools_schema::names::write_alias(&mut out, "link", 12);
/// assert_eq!(out, "[link-12");
/// ```
pub fn write_alias(out: &mut String, prefix: &str, number: u64) {
    use std::fmt::Write as _;
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{prefix}-{number}");
}

/// The prefix and number of an alias-shaped string (`link-3` → `("link", 3)`):
/// the text after the last `-` is a number, and there is text before it.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::names::split_alias;
/// assert_eq!(split_alias("page_theme-12"), Some(("page_theme", 12)));
/// assert_eq!(split_alias("link-"), None);
/// assert_eq!(split_alias("https://x.y"), None);
/// ```
pub fn split_alias(alias: &str) -> Option<(&str, u64)> {
    let (prefix, n) = alias.rsplit_once('-')?;
    if prefix.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((prefix, n.parse().ok()?))
}

/// `a` or `an` before `word`, by how it sounds: `an item`, `a link`,
/// `a user` and `a uuid` (a "you"), `an hour` (a silent h), `a one-off`,
/// and, for an acronym in capitals, by the name of its first letter
/// (`an SKU`, `a URL`). For the sentences made from names: an alias
/// prefix (`an item id`), a message or host name. The word may start
/// with a backtick or a quote, which is skipped.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::names::article;
/// assert_eq!(article("item"), "an");
/// assert_eq!(article("link"), "a");
/// assert_eq!(article("user"), "a");
/// assert_eq!(article("`exact`"), "an");
/// ```
pub fn article(word: &str) -> &'static str {
    let word = word.trim_start_matches(['`', '\'', '"', '(']);
    let letters: String = word
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let is_acronym = letters.len() > 1
        && letters.starts_with(|c: char| c.is_ascii_uppercase())
        && letters
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if is_acronym {
        // The name of the first letter: "eff", "aitch", "ell", "em", ...
        return match letters.chars().next() {
            Some('A' | 'E' | 'F' | 'H' | 'I' | 'L' | 'M' | 'N' | 'O' | 'R' | 'S' | 'X') => "an",
            _ => "a",
        };
    }
    let lower = letters.to_ascii_lowercase();
    // A vowel letter that sounds as a consonant: "you", "wun", "yoo".
    const CONSONANT_SOUNDS: [&str; 14] = [
        "uni", "use", "usa", "usu", "uti", "uri", "url", "uuid", "ure", "ubiq", "eu", "one",
        "once", "ewe",
    ];
    // An h that is not sounded.
    const SILENT_H: [&str; 4] = ["hour", "honest", "honor", "heir"];
    if CONSONANT_SOUNDS
        .iter()
        .any(|start| lower.starts_with(start))
    {
        "a"
    } else if SILENT_H.iter().any(|start| lower.starts_with(start))
        || lower.starts_with(['a', 'e', 'i', 'o', 'u'])
    {
        "an"
    } else if lower.starts_with(|c: char| c.is_ascii_digit()) {
        // "eight", "eighty", "eleven", "eighteen"
        if lower.starts_with('8') || lower == "11" || lower == "18" {
            "an"
        } else {
            "a"
        }
    } else {
        "a"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_article_goes_by_the_sound_of_the_word() {
        for (word, expected) in [
            ("item", "an"),
            ("order", "an"),
            ("account", "an"),
            ("entry", "an"),
            ("update", "an"),
            ("exact", "an"),
            ("link", "a"),
            ("step", "a"),
            ("page_theme", "a"),
            ("user", "a"),
            ("unit", "a"),
            ("uuid", "a"),
            ("url", "a"),
            ("european_site", "a"),
            ("one_time_code", "a"),
            ("hour", "an"),
            ("host", "a"),
            ("SKU", "an"),
            ("URL", "a"),
            ("HTTP", "an"),
            ("RPC", "an"),
            ("`item`", "an"),
            ("'orders.v1.Order'", "an"),
            ("8", "an"),
            ("80", "an"),
            ("11", "an"),
            ("7", "a"),
            ("", "a"),
        ] {
            assert_eq!(article(word), expected, "{word}");
        }
    }

    #[test]
    fn pointer_tokens_escape_tilde_before_slash() {
        let mut pointer = String::from("/properties/");
        push_pointer_token(&mut pointer, "a/b~1c");
        assert_eq!(pointer, "/properties/a~1b~01c");
        assert_eq!(
            crate::render::def_pointer("p.M/x"),
            "#/$defs/p.M~1x",
            "the definition pointers use it too"
        );
    }

    #[test]
    fn tool_names() {
        for ok in ["a", "links_create", "A-b_9", &"a".repeat(64)] {
            assert_eq!(validate_tool_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "_a",
            "9a",
            "-a",
            "a.b",
            "a b",
            "a:b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(validate_tool_name(bad).is_err(), "{bad}");
        }
        let err = validate_tool_name("links.create").unwrap_err();
        assert!(err.contains("`.`"), "{err}");
    }

    #[test]
    fn alias_prefixes() {
        for ok in ["a", "link", "page_theme", "v2"] {
            assert_eq!(validate_alias_prefix(ok), Ok(()), "{ok}");
        }
        for bad in ["", "Link", "_link", "1link", "link-id", "li nk", "ünï"] {
            assert!(validate_alias_prefix(bad).is_err(), "{bad}");
        }
    }
}
