//! Integration tests of ai-tools.
