//! Which of the built tools are kept: the one rule behind `ai_tools!`'s
//! `include`, `exclude` and `read_only` arguments, `ToolSetOptions` and
//! `ToolkitBuilder`'s methods of the same names, and the CLI's `--include`,
//! `--exclude` and `--read-only`.
//!
//! A pattern is a glob ([`globset`]'s syntax: `*`, `?`, `[abc]`, `{a,b}`;
//! case-sensitive, matched whole). One with a `/` in it is matched against
//! the method, written `package.Service/Method` as in the gRPC path
//! (`links.v1.LinksService/*`); any other against the tool name
//! (`links_*`). A tool that is no proto method (a native tool) has no
//! method, so a pattern with a `/` never matches it.
//!
//! With includes a tool must match one of them; a tool that matches an
//! exclude is dropped; read-only applies last, keeping the tools whose
//! hints say read-only ([`ToolHints::read_only`](crate::ToolHints::read_only):
//! the method's `idempotency_level = NO_SIDE_EFFECTS`, or an overlay's
//! `read_only = true`, see [`overlay`](crate::overlay)).
//!
//! A pattern that is not a glob, one that matches no tool at all, and a
//! selection that leaves no tool are errors ([`Problem`]): a typo never
//! exposes nothing, nor, in an exclude, everything.
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::select::{PatternKind, Problem, Selection, Subject};
//!
//! let tools = [
//!     Subject::of_method("links_create", "links.v1.LinksService", "CreateLink", false),
//!     Subject::of_method("links_list", "links.v1.LinksService", "ListLinks", true),
//!     Subject::of_method("steps_delete", "links.v1.StepsService", "DeleteStep", false),
//!     Subject::without_method("search_docs", true),
//! ];
//! let keep = |include: &[&str], exclude: &[&str], read_only: bool| {
//!     let include: Vec<String> = include.iter().map(|p| (*p).to_owned()).collect();
//!     let exclude: Vec<String> = exclude.iter().map(|p| (*p).to_owned()).collect();
//!     let selection = Selection::new(&include, &exclude, read_only)?;
//!     let kept = selection.apply(tools.to_vec(), |tool| tool.clone())?;
//!     Ok::<_, Vec<Problem>>(kept.iter().map(|tool| tool.name).collect::<Vec<_>>())
//! };
//!
//! assert_eq!(keep(&["links_*"], &[], false).unwrap(), ["links_create", "links_list"]);
//! assert_eq!(keep(&["links.v1.LinksService/*"], &["*/Create*"], false).unwrap(), ["links_list"]);
//! assert_eq!(keep(&[], &[], true).unwrap(), ["links_list", "search_docs"]);
//!
//! // A typo is an error naming the pattern, not an empty selection.
//! let problems = keep(&["link_*"], &[], false).unwrap_err();
//! assert_eq!(problems[0].pattern(), Some((PatternKind::Include, 0)));
//! assert_eq!(
//!     problems[0].to_string(),
//!     "include pattern `link_*` matches no tool name; the tool names are links_create, \
//!      links_list, steps_delete, search_docs (4 in all)"
//! );
//! ```

use std::fmt;

use globset::{Glob, GlobMatcher};

use crate::tool_spec::ToolSpec;

/// How many names an error lists before "…".
const LISTED: usize = 6;

/// One tool as a selection sees it: its name, its method and whether it
/// is read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Subject<'a> {
    /// The tool name.
    pub name: &'a str,
    /// The method, `package.Service/Method`; `None` for a tool that is no
    /// proto method.
    pub method: Option<String>,
    /// Whether its hints say it changes nothing.
    pub read_only: bool,
}

impl<'a> Subject<'a> {
    /// The tool `name` of the method `method` of `service` (fully
    /// qualified), read-only or not.
    pub fn of_method(name: &'a str, service: &str, method: &str, read_only: bool) -> Self {
        Self {
            name,
            method: Some(format!("{service}/{method}")),
            read_only,
        }
    }

    /// The tool `name`, which is no proto method (a native tool): a pattern
    /// with a `/` never matches it.
    pub fn without_method(name: &'a str, read_only: bool) -> Self {
        Self {
            name,
            method: None,
            read_only,
        }
    }

    /// The tool of `spec`, read-only as its hints say.
    pub fn of_spec(spec: &'a ToolSpec) -> Self {
        Self::of_method(
            &spec.name,
            &spec.service,
            &spec.method,
            spec.hints.read_only,
        )
    }
}

/// Which list a pattern is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// The includes: a tool must match one of them.
    Include,
    /// The excludes: a tool that matches one is dropped.
    Exclude,
}

impl PatternKind {
    /// `include` or `exclude`, as the errors say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Include => "include",
            Self::Exclude => "exclude",
        }
    }
}

impl fmt::Display for PatternKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is wrong with a selection, each a sentence that names what was
/// asked ([`Display`](fmt::Display) writes it). Where it is one pattern's
/// fault, [`pattern`](Self::pattern) says which, so that a caller can point
/// at it (the macro puts the error on that string literal).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The `index`th pattern of its list is not a glob.
    NotAGlob {
        /// The pattern's list.
        kind: PatternKind,
        /// Its position in the list, from 0.
        index: usize,
        /// The sentence.
        message: String,
    },
    /// The `index`th pattern of its list matches no tool at all.
    MatchesNoTool {
        /// The pattern's list.
        kind: PatternKind,
        /// Its position in the list, from 0.
        index: usize,
        /// The sentence.
        message: String,
    },
    /// The selection keeps no tool.
    LeavesNoTool {
        /// Whether the globs keep some tools and read-only drops them all;
        /// `false` when the excludes drop all the includes keep.
        by_read_only: bool,
        /// The sentence.
        message: String,
    },
}

impl Problem {
    /// The sentence.
    pub fn message(&self) -> &str {
        match self {
            Self::NotAGlob { message, .. }
            | Self::MatchesNoTool { message, .. }
            | Self::LeavesNoTool { message, .. } => message,
        }
    }

    /// The pattern at fault, its list and position there; `None` for a
    /// selection that leaves no tool.
    pub fn pattern(&self) -> Option<(PatternKind, usize)> {
        match self {
            Self::NotAGlob { kind, index, .. } | Self::MatchesNoTool { kind, index, .. } => {
                Some((*kind, *index))
            }
            Self::LeavesNoTool { .. } => None,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Problem {}

#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    kind: PatternKind,
    index: usize,
    /// Matched against the method, not the name.
    on_method: bool,
    matcher: GlobMatcher,
}

impl Pattern {
    fn matches(&self, subject: &Subject<'_>) -> bool {
        if self.on_method {
            subject
                .method
                .as_deref()
                .is_some_and(|method| self.matcher.is_match(method))
        } else {
            self.matcher.is_match(subject.name)
        }
    }
}

/// Includes, excludes and the read-only rule, the globs compiled.
///
/// # Examples
///
/// See the [module](self).
#[derive(Debug, Clone)]
pub struct Selection {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
    read_only: bool,
}

impl Selection {
    /// The selection of these includes, excludes and read-only rule.
    ///
    /// # Errors
    ///
    /// A [`Problem::NotAGlob`] for every pattern that is not a glob.
    pub fn new(
        include: &[String],
        exclude: &[String],
        read_only: bool,
    ) -> Result<Self, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut compile = |kind: PatternKind, patterns: &[String]| -> Vec<Pattern> {
            patterns
                .iter()
                .enumerate()
                .filter_map(|(index, text)| match Glob::new(text) {
                    Ok(glob) => Some(Pattern {
                        text: text.clone(),
                        kind,
                        index,
                        on_method: text.contains('/'),
                        matcher: glob.compile_matcher(),
                    }),
                    Err(e) => {
                        problems.push(Problem::NotAGlob {
                            kind,
                            index,
                            message: format!("{kind} pattern `{text}` is not a glob: {e}"),
                        });
                        None
                    }
                })
                .collect()
        };
        let include = compile(PatternKind::Include, include);
        let exclude = compile(PatternKind::Exclude, exclude);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            include,
            exclude,
            read_only,
        })
    }

    /// Whether the selection keeps every tool (it asks for nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_schema::select::Selection;
    /// assert!(Selection::new(&[], &[], false).unwrap().is_everything());
    /// assert!(!Selection::new(&[], &[], true).unwrap().is_everything());
    /// ```
    pub fn is_everything(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty() && !self.read_only
    }

    /// Whether the globs keep `subject` (read-only aside).
    fn globs_keep(&self, subject: &Subject<'_>) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(subject)))
            && !self.exclude.iter().any(|p| p.matches(subject))
    }

    /// The tools of `tools` the selection keeps, in their order; `about`
    /// says what each is.
    ///
    /// # Errors
    ///
    /// A [`Problem::MatchesNoTool`] for every pattern that matches none of
    /// `tools` (naming some of them), or else a [`Problem::LeavesNoTool`]
    /// when there are tools and the selection keeps none.
    ///
    /// # Examples
    ///
    /// See the [module](self).
    pub fn apply<T>(
        &self,
        tools: Vec<T>,
        about: impl Fn(&T) -> Subject<'_>,
    ) -> Result<Vec<T>, Vec<Problem>> {
        let subjects: Vec<Subject<'_>> = tools.iter().map(&about).collect();
        let problems: Vec<Problem> = self
            .include
            .iter()
            .chain(&self.exclude)
            .filter(|p| !subjects.iter().any(|s| p.matches(s)))
            .map(|p| Problem::MatchesNoTool {
                kind: p.kind,
                index: p.index,
                message: unmatched(p, &subjects),
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        let by_globs: Vec<bool> = subjects.iter().map(|s| self.globs_keep(s)).collect();
        let keep: Vec<bool> = subjects
            .iter()
            .zip(&by_globs)
            .map(|(s, kept)| *kept && (!self.read_only || s.read_only))
            .collect();
        if !subjects.is_empty() && !keep.contains(&true) {
            return Err(vec![Problem::LeavesNoTool {
                by_read_only: by_globs.contains(&true),
                message: format!(
                    "the selection leaves no tool ({}); the tools are {}",
                    self.describe(),
                    listed(subjects.iter().map(|s| s.name))
                ),
            }]);
        }
        Ok(tools
            .into_iter()
            .zip(keep)
            .filter_map(|(tool, kept)| kept.then_some(tool))
            .collect())
    }

    /// What was asked, for the error of an empty selection.
    fn describe(&self) -> String {
        let patterns = |list: &[Pattern]| {
            list.iter()
                .map(|p| format!("`{}`", p.text))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.include.is_empty() {
            parts.push(format!("include {}", patterns(&self.include)));
        }
        if !self.exclude.is_empty() {
            parts.push(format!("exclude {}", patterns(&self.exclude)));
        }
        if self.read_only {
            parts.push(
                "read-only: `idempotency_level = NO_SIDE_EFFECTS` or an overlay's `read_only = true`"
                    .to_owned(),
            );
        }
        parts.join("; ")
    }
}

/// The error of a pattern that matches no tool.
fn unmatched(pattern: &Pattern, subjects: &[Subject<'_>]) -> String {
    let start = format!("{} pattern `{}` matches no", pattern.kind, pattern.text);
    if subjects.is_empty() {
        return format!("{start} tool: there is none");
    }
    if !pattern.on_method {
        return format!(
            "{start} tool name; the tool names are {}",
            listed(subjects.iter().map(|s| s.name))
        );
    }
    let methods: Vec<&str> = subjects
        .iter()
        .filter_map(|s| s.method.as_deref())
        .collect();
    if methods.is_empty() {
        return format!(
            "{start} method (`package.Service/Method`); none of the tools is a proto method"
        );
    }
    format!(
        "{start} method (`package.Service/Method`); the methods are {}",
        listed(methods.iter().copied())
    )
}

/// `items` as an error lists them: the first six, then "…", and how many
/// there are: "a, b, c, d, e, f, … (9 in all)".
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::select::listed;
/// assert_eq!(listed(["a", "b"].into_iter()), "a, b (2 in all)");
/// assert_eq!(listed(["a", "b", "c", "d", "e", "f", "g"].into_iter()), "a, b, c, d, e, f, … (7 in all)");
/// ```
pub fn listed<'s>(items: impl ExactSizeIterator<Item = &'s str>) -> String {
    let total = items.len();
    let mut shown: Vec<&str> = items.take(LISTED).collect();
    if total > LISTED {
        shown.push("…");
    }
    format!("{} ({total} in all)", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subjects() -> Vec<Subject<'static>> {
        vec![
            Subject::of_method("a_get", "p.A", "Get", true),
            Subject::of_method("a_put", "p.A", "Put", false),
            Subject::of_method("b_get", "p.B", "Get", true),
            Subject::without_method("native", false),
        ]
    }

    fn strings(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|p| (*p).to_owned()).collect()
    }

    fn run(
        include: &[&str],
        exclude: &[&str],
        read_only: bool,
    ) -> Result<Vec<&'static str>, Vec<Problem>> {
        let selection = Selection::new(&strings(include), &strings(exclude), read_only)?;
        let kept = selection.apply(subjects(), |s| s.clone())?;
        Ok(kept.iter().map(|s| s.name).collect())
    }

    #[test]
    fn includes_excludes_and_read_only() {
        assert_eq!(
            run(&[], &[], false).unwrap(),
            ["a_get", "a_put", "b_get", "native"]
        );
        assert_eq!(run(&["*_get"], &[], false).unwrap(), ["a_get", "b_get"]);
        assert_eq!(run(&["p.A/*"], &[], false).unwrap(), ["a_get", "a_put"]);
        assert_eq!(
            run(&["p.A/*", "native"], &["a_put"], false).unwrap(),
            ["a_get", "native"]
        );
        assert_eq!(run(&[], &["*/Get"], false).unwrap(), ["a_put", "native"]);
        assert_eq!(run(&[], &[], true).unwrap(), ["a_get", "b_get"]);
        assert_eq!(run(&["a_*"], &[], true).unwrap(), ["a_get"]);
    }

    #[test]
    fn a_method_pattern_never_matches_a_tool_without_a_method() {
        // `*` with a `/` is matched against methods only.
        assert_eq!(
            run(&["*/*"], &[], false).unwrap(),
            ["a_get", "a_put", "b_get"]
        );
        let natives = [Subject::without_method("x", false)];
        let selection = Selection::new(&strings(&["p.A/*"]), &[], false).unwrap();
        let problems = selection
            .apply(natives.to_vec(), |s| s.clone())
            .unwrap_err();
        assert_eq!(
            problems[0].message(),
            "include pattern `p.A/*` matches no method (`package.Service/Method`); none of the tools is a proto method"
        );
    }

    #[test]
    fn each_problem_names_its_pattern() {
        let problems = run(&["a_*", "c_*"], &["p.C/*"], false).unwrap_err();
        let at: Vec<_> = problems.iter().map(Problem::pattern).collect();
        assert_eq!(
            at,
            [
                Some((PatternKind::Include, 1)),
                Some((PatternKind::Exclude, 0))
            ]
        );
        assert_eq!(
            problems[1].to_string(),
            "exclude pattern `p.C/*` matches no method (`package.Service/Method`); the methods are p.A/Get, p.A/Put, p.B/Get (3 in all)"
        );
        let bad = run(&["ok", "a_["], &["{x"], false).unwrap_err();
        assert_eq!(bad.len(), 2);
        assert!(matches!(
            bad[0],
            Problem::NotAGlob {
                kind: PatternKind::Include,
                index: 1,
                ..
            }
        ));
        assert!(
            bad[0]
                .message()
                .starts_with("include pattern `a_[` is not a glob: "),
            "{}",
            bad[0]
        );
        assert!(
            bad[1]
                .message()
                .starts_with("exclude pattern `{x` is not a glob: "),
            "{}",
            bad[1]
        );
    }

    #[test]
    fn a_selection_that_leaves_nothing_says_why() {
        let by_excludes = run(&["a_*"], &["*"], true).unwrap_err();
        assert_eq!(
            by_excludes,
            [Problem::LeavesNoTool {
                by_read_only: false,
                message: "the selection leaves no tool (include `a_*`; exclude `*`; read-only: \
                          `idempotency_level = NO_SIDE_EFFECTS` or an overlay's `read_only = true`); \
                          the tools are a_get, a_put, b_get, native (4 in all)"
                    .to_owned(),
            }]
        );
        let by_read_only = run(&["a_put", "native"], &[], true).unwrap_err();
        assert!(matches!(
            by_read_only[0],
            Problem::LeavesNoTool {
                by_read_only: true,
                ..
            }
        ));
        assert_eq!(by_read_only[0].pattern(), None);
    }

    #[test]
    fn no_tools_at_all() {
        let selection = Selection::new(&strings(&["x"]), &[], true).unwrap();
        let problems = selection
            .apply(Vec::<Subject<'_>>::new(), |s| s.clone())
            .unwrap_err();
        assert_eq!(
            problems[0].message(),
            "include pattern `x` matches no tool: there is none"
        );
        // Read-only alone has nothing to leave out.
        let selection = Selection::new(&[], &[], true).unwrap();
        assert!(
            selection
                .apply(Vec::<Subject<'_>>::new(), |s| s.clone())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn many_tools_are_listed_in_part() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        assert_eq!(listed(names.into_iter()), "a, b, c, d, e, f, … (8 in all)");
        assert_eq!(
            listed(names[..6].iter().copied()),
            "a, b, c, d, e, f (6 in all)"
        );
    }
}
