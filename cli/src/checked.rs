//! A flag's value checked as clap parses it: [`Checked`], the value
//! parser of every flag with a check, and the checks of seconds and of
//! counts that flags all over the command line use. It imports no other
//! module, so that every module declaring flags can use it.

use std::ffi::OsStr;
use std::time::Duration;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;

/// A flag's value checked by `check(flag, text)`, whose error is said as
/// is (it names the flag and the value); `choices` are offered to shell
/// completion and listed in the help.
#[derive(Clone)]
pub(crate) struct Checked<T> {
    check: fn(&str, &str) -> Result<T, String>,
    choices: &'static [&'static str],
}

impl<T> Checked<T> {
    pub(crate) const fn new(
        check: fn(&str, &str) -> Result<T, String>,
        choices: &'static [&'static str],
    ) -> Self {
        Self { check, choices }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Checked<T> {
    type Value = T;

    fn parse_ref(
        &self,
        _command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let flag = arg
            .and_then(|a| a.get_long())
            .map_or_else(String::new, |long| format!("--{long}"));
        let text = value.to_str().ok_or_else(|| {
            clap::Error::raw(
                ErrorKind::InvalidUtf8,
                format!("`{flag}`: the value is not UTF-8"),
            )
        })?;
        (self.check)(&flag, text).map_err(|m| clap::Error::raw(ErrorKind::ValueValidation, m))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        if self.choices.is_empty() {
            return None;
        }
        Some(Box::new(self.choices.iter().map(PossibleValue::new)))
    }
}

/// A positive number of seconds, fractions allowed.
pub(crate) fn seconds(flag: &str, text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("`{flag} {text}`: give a positive number of seconds"))
}

/// A positive whole number.
pub(crate) fn count(flag: &str, text: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{flag} {text}`: give a positive whole number"))
}
