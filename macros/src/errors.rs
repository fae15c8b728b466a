//! Collect every error, then fail once (serde's `Ctxt`): each pass pushes
//! what it finds and goes on, and the errors reach the user combined with
//! `syn::Error::combine`, each under its own span.

use proc_macro2::Span;

/// Errors collected along a pass.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    /// Whether no error was found so far.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every error so far, combined in the order found; `None` if there is none.
    pub fn finish(self) -> Option<syn::Error> {
        self.0.into_iter().reduce(|mut all, error| {
            all.combine(error);
            all
        })
    }

    /// Every error so far followed by `last`, a mistake that ends the pass.
    pub fn fail(self, last: syn::Error) -> syn::Error {
        match self.finish() {
            Some(mut all) => {
                all.combine(last);
                all
            }
            None => last,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_combined_in_order() {
        let mut errors = Errors::default();
        errors.at(Span::call_site(), "first");
        errors.push(syn::Error::new(Span::call_site(), "second"));
        let all = errors.fail(syn::Error::new(Span::call_site(), "third"));
        let messages: Vec<String> = all.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second", "third"]);
        assert!(Errors::default().finish().is_none());
    }
}
