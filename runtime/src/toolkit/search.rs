//! Ranked search over a toolkit's tools (feature `tool-search`): what a
//! model uses to find the few tools it needs among hundreds.
//!
//! Each tool is one document: its name, its gRPC service and method, the
//! everyday words for the method's verb (`Stop`: "shut down", "halt"), its
//! title, the first sentence of its description and its service's title
//! (the first sentence of the service's comment in the proto, or its name).
//! Identifiers are split into words first (`instances_attach_disk`,
//! `AttachDisk` and `attached_disk` all give `attach`), because a model
//! asks in words, not in identifiers. The documents are ranked by Okapi
//! BM25 (the [`bm25`] crate, with its English tokenizer: Unicode word
//! boundaries, stop words, Snowball stemming), so a word that is rare in
//! the API (`snapshot`) weighs more than one in every tool (`project`).
//!
//! The name, the service and the method are each written twice: they are
//! short and they say what the tool is, where a description also says what
//! it is not. Only the description's first sentence is taken, the one that
//! says what the tool does; the rest, the request's field names and the
//! resource nouns of the method's HTTP path were measured to add more noise
//! than matches (BENCHMARKS.md §9).
//!
//! With feature `semantic-search`, [`ToolIndex::with_embeddings`] also
//! ranks the tools by meaning (the same documents as vectors of a sentence
//! embedding model) and fuses the two rankings: see
//! [`semantic`](super::semantic).

use bm25::{Embedder, EmbedderBuilder, Language, Scorer};

use super::{Tool, Toolkit};

/// A BM25 index over the tools of a [`Toolkit`], built once.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::toolkit::search::ToolIndex;
///
/// mod links {
///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
/// }
/// let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
/// let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build().unwrap();
/// let index = ToolIndex::new(&toolkit);
///
/// let found = index.search("change the target address of a short link", 3);
/// assert_eq!(found[0].name, "links_update");
/// assert!(found.len() <= 3);
/// ```
pub struct ToolIndex {
    embedder: Embedder,
    scorer: Scorer<usize>,
    names: Vec<String>,
    /// The tools' vectors, when the index also ranks by meaning.
    #[cfg(feature = "semantic-search")]
    meaning: Option<super::semantic::Meaning>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.names.len())
            .finish_non_exhaustive()
    }
}

/// One tool a search found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolMatch {
    /// The tool's name, as [`Toolkit::get`] takes it.
    pub name: String,
    /// Its BM25 score; or, in an index [with
    /// embeddings](ToolIndex::with_embeddings), its reciprocal-rank-fusion
    /// score: the sum over BM25's ranking and the ranking by meaning of
    /// `1 / (60 + rank)`, rank 1 the best (so at most 2/61). Higher is
    /// more relevant; only the order means anything.
    pub score: f32,
}

impl ToolIndex {
    /// Indexes every tool of `toolkit`.
    pub fn new(toolkit: &Toolkit) -> Self {
        let documents: Vec<String> = toolkit.tools().iter().map(document).collect();
        Self::of_documents(toolkit, &documents)
    }

    /// Indexes every tool of `toolkit` by its words (BM25, as
    /// [`new`](Self::new)) and by its meaning, with the vectors of
    /// `embeddings` (read from its cache, or computed and cached there),
    /// and fuses the two rankings by reciprocal rank fusion: see
    /// [`semantic`](super::semantic). Every tool then matches every
    /// query, the ones of like meaning first.
    ///
    /// # Errors
    ///
    /// [`EmbeddingError`](super::semantic::EmbeddingError): the tools'
    /// vectors could not be computed (the model failed, the endpoint could
    /// not be reached or answered something else).
    ///
    /// # Examples
    ///
    /// See [`semantic`](super::semantic).
    #[cfg(feature = "semantic-search")]
    pub fn with_embeddings(
        toolkit: &Toolkit,
        embeddings: &super::semantic::Embeddings,
    ) -> Result<Self, super::semantic::EmbeddingError> {
        let documents: Vec<String> = toolkit.tools().iter().map(document).collect();
        let meaning = super::semantic::Meaning::build(&documents, embeddings)?;
        Ok(Self {
            meaning: Some(meaning),
            ..Self::of_documents(toolkit, &documents)
        })
    }

    /// How the tools' vectors were had, in an index
    /// [with embeddings](Self::with_embeddings); `None` in one of words
    /// alone.
    #[cfg(feature = "semantic-search")]
    pub fn embeddings(&self) -> Option<&super::semantic::EmbeddingsInfo> {
        self.meaning.as_ref().map(super::semantic::Meaning::info)
    }

    /// The BM25 index of `documents`, one per tool of `toolkit`.
    fn of_documents(toolkit: &Toolkit, documents: &[String]) -> Self {
        let corpus: Vec<&str> = documents.iter().map(String::as_str).collect();
        let embedder: Embedder =
            EmbedderBuilder::with_fit_to_corpus(Language::English, &corpus).build();
        let mut scorer = Scorer::new();
        for (i, text) in documents.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(text));
        }
        let names = toolkit
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        Self {
            embedder,
            scorer,
            names,
            #[cfg(feature = "semantic-search")]
            meaning: None,
        }
    }

    /// The tools that best match `query`, best first, at most `limit` of
    /// them; none when no word of the query occurs in any tool (in an
    /// index of words alone: [with embeddings](Self::with_embeddings),
    /// every tool matches).
    pub fn search(&self, query: &str, limit: usize) -> Vec<ToolMatch> {
        self.ranked(query).take(limit).collect()
    }

    /// Every tool that matches `query` at all, best first: tools of equal
    /// score in toolkit order, so that one query always gives one answer.
    /// For a caller that filters before it takes the first few (a
    /// [`search`](Self::search) would cut first).
    pub fn ranked(&self, query: &str) -> impl Iterator<Item = ToolMatch> + '_ {
        let mut found = self.scorer.matches(&self.embedder.embed(&words(query)));
        found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        let found: Vec<(usize, f32)> = found.into_iter().map(|f| (f.id, f.score)).collect();
        #[cfg(feature = "semantic-search")]
        let found = match &self.meaning {
            Some(meaning) => meaning.fuse(query, found),
            None => found,
        };
        found.into_iter().filter_map(|(id, score)| {
            Some(ToolMatch {
                name: self.names.get(id)?.clone(),
                score,
            })
        })
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The text a tool is found by (see the [module docs](self)); also its
/// retrieval document for rig (`proto_ai_tools::rig::embedding_documents`).
pub(crate) fn document(tool: &Tool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let name = words(tool.name());
    parts.push(name.clone());
    parts.push(name);
    if let Some(agent) = tool.agent_tool() {
        let service = agent.method.service.rsplit('.').next().unwrap_or_default();
        let method = words(agent.method.method);
        let called = format!("{} {method}", words(service));
        parts.push(called.clone());
        parts.push(called);
        let verb = method.split(' ').next().unwrap_or_default();
        if let Some((_, also)) = VERB_WORDS.iter().find(|(v, _)| *v == verb) {
            parts.push((*also).to_owned());
        }
    }
    if let Some(title) = tool.title() {
        parts.push(title.to_owned());
    }
    parts.push(summary(tool.description()));
    if let Some(title) = service_title(tool) {
        parts.push(title);
    }
    parts.join(". ")
}

/// The one-line summary of a tool's description: its first sentence, its
/// reference links written as their text
/// (`[Secret][google.cloud.secretmanager.v1.Secret]` gives `Secret`), at
/// most [`MAX_SUMMARY_CHARS`] characters (cut at a word, with `…`).
///
/// # Examples
///
/// ```
/// use proto_ai_tools::toolkit::search::summary;
///
/// assert_eq!(
///     summary("Gets metadata for a given [Secret][google.cloud.secretmanager.v1.Secret].\n\nMore."),
///     "Gets metadata for a given Secret."
/// );
/// assert_eq!(summary("Stops a VM, e.g. web-1. It can start again."), "Stops a VM, e.g. web-1.");
/// ```
pub fn summary(description: &str) -> String {
    let sentence = first_sentence(&unlinked(description));
    if sentence.chars().count() <= MAX_SUMMARY_CHARS {
        return sentence;
    }
    let cut: String = sentence.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// The longest [`summary`], in characters: one line.
pub const MAX_SUMMARY_CHARS: usize = 200;

/// The title of a generated tool's service (its toolset), in words: the
/// first sentence of the service's leading comment in the proto ("The
/// Cloud Scheduler API allows external entities to reliably schedule
/// asynchronous jobs."), or else its name in words (`SqlInstancesService`:
/// "sql instances service"). `None` for a native tool.
pub fn service_title(tool: &Tool) -> Option<String> {
    let super::Kind::Generated { tool, source } = &tool.kind else {
        return None;
    };
    let service = source
        .descriptor_pool()
        .get_service_by_name(tool.method.service);
    let comment = service.as_ref().and_then(|service| {
        proto_ai_tools_schema::proto::leading_comment(&service.parent_file(), service.path())
    });
    let named = || words(tool.method.service.rsplit('.').next().unwrap_or_default());
    Some(
        comment
            .map(|comment| summary(&comment))
            .filter(|title| !title.is_empty())
            .unwrap_or_else(named),
    )
}

/// `text` with its reference links written as their text: a proto
/// comment's `[Secret][google.cloud.secretmanager.v1.Secret]` and a
/// Markdown `[docs](https://…)` give `Secret` and `docs`.
fn unlinked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let (label, tail) = (&after[..close], &after[close + 1..]);
        let target_end = match tail.chars().next() {
            Some('[') => tail.find(']').map(|end| end + 1),
            Some('(') => tail.find(')').map(|end| end + 1),
            _ => None,
        };
        match target_end {
            Some(end) => {
                out.push_str(label);
                rest = &tail[end..];
            }
            None => {
                out.push('[');
                out.push_str(label);
                out.push(']');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The first sentence of `text`, on one line: up to the first `.`, `!` or
/// `?` that ends a word before a space (not `e.g.`, `i.e.` or `etc.`), or
/// to the first blank line.
fn first_sentence(text: &str) -> String {
    let paragraph = text.trim().split("\n\n").next().unwrap_or_default();
    let line = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let next = line[i + c.len_utf8()..].chars().next();
        if next.is_some_and(|n| !n.is_whitespace()) {
            continue;
        }
        let word = line[..i].rsplit(' ').next().unwrap_or_default();
        if ["e.g", "i.e", "etc", "vs", "approx"].contains(&word.to_ascii_lowercase().as_str()) {
            continue;
        }
        end = i + c.len_utf8();
        break;
    }
    line[..end].to_owned()
}

/// The everyday words for the verbs that start method names, across APIs
/// (Google's AIP standard methods and the common custom ones): a model asks
/// to "shut down" or "show" what a method calls `Stop` or `Get`. Added to
/// the document of a method that starts with the verb. Stop words ("all",
/// "on", "down") are left out: the tokenizer drops them.
const VERB_WORDS: &[(&str, &str)] = &[
    ("get", "show view describe details fetch read"),
    ("list", "show every enumerate"),
    ("aggregated", "every across"),
    ("insert", "create add new make provision"),
    ("create", "add new make provision"),
    ("delete", "remove drop destroy erase"),
    ("remove", "delete drop take"),
    ("update", "change modify edit"),
    ("patch", "change modify edit update"),
    ("set", "change assign configure"),
    ("start", "boot launch run power"),
    ("stop", "shut shutdown halt power"),
    ("reset", "restart reboot power cycle"),
    ("resize", "scale grow shrink size"),
    ("suspend", "pause hibernate"),
    ("resume", "unpause continue wake"),
    ("attach", "add connect"),
    ("detach", "remove disconnect"),
    ("add", "create attach new"),
    ("move", "migrate relocate transfer"),
    ("cancel", "stop abort"),
];

/// `text` with its identifiers split into lower-case words:
/// `instances_attachDisk` and `InstancesAttachDisk` give
/// `instances attach disk`; other text passes through.
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '.' || c == '/' || c == '-' {
            out.push(' ');
            previous = None;
            continue;
        }
        if let Some(p) = previous
            && c.is_uppercase()
        {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // A word starts at an upper-case letter after a lower-case one
            // or a digit (`attachDisk`), and at the last capital of a run
            // followed by a lower-case letter (`HTTPHealth` → `http health`).
            if p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_lower) {
                out.push(' ');
            }
        }
        out.extend(c.to_lowercase());
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{first_sentence, summary, unlinked, words};

    #[test]
    fn reference_links_are_written_as_their_text() {
        assert_eq!(
            unlinked("Lists [SecretVersions][google.cloud.secretmanager.v1.SecretVersion]."),
            "Lists SecretVersions."
        );
        assert_eq!(
            unlinked("See [the docs](https://cloud.google.com/x) and [Queue][]."),
            "See the docs and Queue."
        );
        assert_eq!(
            unlinked("a [bracket] stays, [open"),
            "a [bracket] stays, [open"
        );
    }

    #[test]
    fn the_first_sentence_ends_at_a_full_stop_or_a_blank_line() {
        assert_eq!(
            first_sentence("Stops a running instance,\nshutting it down. It can restart."),
            "Stops a running instance, shutting it down."
        );
        assert_eq!(
            first_sentence("Execute MVU Pre-checks\n\nMore."),
            "Execute MVU Pre-checks"
        );
        assert_eq!(
            first_sentence("Uses v1.2 of the API. Then."),
            "Uses v1.2 of the API."
        );
        assert_eq!(
            first_sentence("Picks one, i.e. the first! Rest."),
            "Picks one, i.e. the first!"
        );
        assert_eq!(first_sentence(""), "");
    }

    #[test]
    fn a_summary_is_one_line_of_at_most_200_characters() {
        let long = format!("Does {}.", "a thing and ".repeat(40));
        let cut = summary(&long);
        assert!(cut.chars().count() <= super::MAX_SUMMARY_CHARS, "{cut}");
        assert!(
            cut.starts_with("Does a thing and") && cut.ends_with(" a…"),
            "{cut}"
        );
        assert!(!cut.contains('\n'));
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(words("instances_attach_disk"), "instances attach disk");
        assert_eq!(words("AttachDisk"), "attach disk");
        assert_eq!(words("HTTPHealthChecks"), "http health checks");
        assert_eq!(
            words("google.cloud.compute.v1.Instances/Stop"),
            "google cloud compute v1 instances stop"
        );
        assert_eq!(words("stop the VM, now"), "stop the vm, now");
    }
}
