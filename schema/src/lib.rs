//! The schema rules of ai-tools.
