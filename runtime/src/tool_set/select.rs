//! Which of the built tools a set keeps:
//! [`ToolSetOptions::include`](super::ToolSetOptions::include),
//! [`exclude`](super::ToolSetOptions::exclude) and
//! [`read_only`](super::ToolSetOptions::read_only).
//!
//! A pattern is a glob ([`globset`]'s syntax: `*`, `?`, `[abc]`, `{a,b}`;
//! case-sensitive). One with a `/` in it is matched against the method,
//! written `package.Service/Method` as in the gRPC path
//! (`links.v1.LinksService/*`); any other against the tool name
//! (`links_*`). With includes a tool must match one of them; a tool that
//! matches an exclude is dropped; read-only applies last. A pattern that
//! matches no tool at all, or a selection that leaves none, is an error.

use globset::{Glob, GlobMatcher};

/// How many names an error lists before "…".
const LISTED: usize = 6;

/// One tool as the selection sees it.
pub(super) struct Subject<'a> {
    /// The tool name.
    pub(super) name: &'a str,
    /// `package.Service/Method`.
    pub(super) method: String,
    /// Whether its hints say it changes nothing.
    pub(super) read_only: bool,
}

struct Pattern<'a> {
    text: &'a str,
    /// `include` or `exclude`, for the errors.
    kind: &'static str,
    /// Matched against the method, not the name.
    on_method: bool,
    matcher: GlobMatcher,
}

impl Pattern<'_> {
    fn matches(&self, subject: &Subject<'_>) -> bool {
        if self.on_method {
            self.matcher.is_match(&subject.method)
        } else {
            self.matcher.is_match(subject.name)
        }
    }
}

/// The selection of `options`, its globs compiled.
pub(super) struct Selection<'a> {
    include: Vec<Pattern<'a>>,
    exclude: Vec<Pattern<'a>>,
    read_only: bool,
}

impl<'a> Selection<'a> {
    /// The selection of these includes, excludes and read-only rule (what
    /// a set's options ask for).
    ///
    /// # Errors
    ///
    /// Every pattern that is not a glob, a sentence each.
    pub(super) fn new(
        include: &'a [String],
        exclude: &'a [String],
        read_only: bool,
    ) -> Result<Self, Vec<String>> {
        let mut problems = Vec::new();
        let mut compile = |kind: &'static str, patterns: &'a [String]| -> Vec<Pattern<'a>> {
            patterns
                .iter()
                .filter_map(|text| match Glob::new(text) {
                    Ok(glob) => Some(Pattern {
                        text,
                        kind,
                        on_method: text.contains('/'),
                        matcher: glob.compile_matcher(),
                    }),
                    Err(e) => {
                        problems.push(format!("{kind} pattern `{text}` is not a glob: {e}"));
                        None
                    }
                })
                .collect()
        };
        let include = compile("include", include);
        let exclude = compile("exclude", exclude);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            include,
            exclude,
            read_only,
        })
    }

    /// Whether the selection keeps every tool.
    pub(super) fn is_everything(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty() && !self.read_only
    }

    /// Whether `subject` is kept.
    fn keeps(&self, subject: &Subject<'_>) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(subject)))
            && !self.exclude.iter().any(|p| p.matches(subject))
            && (!self.read_only || subject.read_only)
    }

    /// The tools of `tools` the selection keeps, in their order; `about`
    /// says what each is.
    ///
    /// # Errors
    ///
    /// Every pattern that matches none of `tools`, naming some of them; a
    /// selection that keeps none. A sentence each.
    pub(super) fn apply<T>(
        &self,
        tools: Vec<T>,
        about: impl Fn(&T) -> Subject<'_>,
    ) -> Result<Vec<T>, Vec<String>> {
        let subjects: Vec<Subject<'_>> = tools.iter().map(&about).collect();
        let problems: Vec<String> = self
            .include
            .iter()
            .chain(&self.exclude)
            .filter(|p| !subjects.iter().any(|s| p.matches(s)))
            .map(|p| unmatched(p, &subjects))
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        let keep: Vec<bool> = subjects.iter().map(|s| self.keeps(s)).collect();
        if !keep.contains(&true) {
            return Err(vec![format!(
                "the selection leaves no tool ({}); the tools are {}",
                self.describe(),
                listed(subjects.iter().map(|s| s.name))
            )]);
        }
        Ok(tools
            .into_iter()
            .zip(keep)
            .filter_map(|(tool, kept)| kept.then_some(tool))
            .collect())
    }

    /// What was asked, for the error of an empty selection.
    fn describe(&self) -> String {
        let patterns = |list: &[Pattern<'_>]| {
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
            parts.push("read-only (`idempotency_level = NO_SIDE_EFFECTS`)".to_owned());
        }
        parts.join("; ")
    }
}

/// The error of a pattern that matches no tool.
fn unmatched(pattern: &Pattern<'_>, subjects: &[Subject<'_>]) -> String {
    let (what, known) = if pattern.on_method {
        (
            "method (`package.Service/Method`); the methods are",
            listed(subjects.iter().map(|s| s.method.as_str())),
        )
    } else {
        (
            "tool name; the tool names are",
            listed(subjects.iter().map(|s| s.name)),
        )
    };
    format!(
        "{} pattern `{}` matches no {what} {known}",
        pattern.kind, pattern.text
    )
}

/// "a, b, c, … (9 in all)".
pub(super) fn listed<'s>(items: impl ExactSizeIterator<Item = &'s str>) -> String {
    let total = items.len();
    let mut shown: Vec<&str> = items.take(LISTED).collect();
    if total > LISTED {
        shown.push("…");
    }
    format!("{} ({total} in all)", shown.join(", "))
}
