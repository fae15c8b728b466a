//! `ai-tools completions SHELL`: clap_complete's script for the shell,
//! bash's mended so that it completes each command's own flags.

use clap_complete::Shell;

use crate::flags;

/// The command the scripts complete.
const BIN: &str = "ai-tools";

/// The completion script for `shell`.
pub(crate) fn script(shell: Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut flags::command(), BIN, &mut script);
    let script = String::from_utf8_lossy(&script).into_owned();
    match shell {
        Shell::Bash => mend_bash(&script, BIN),
        _ => script,
    }
}

/// clap_complete's bash script for a hyphenated `bin` names one state two
/// ways (clap-rs/clap#6421): the loop over the words sets `cmd` to
/// `ai__tools__subcmd__mcp` (the hyphen as `__`), but the arm that lists
/// `mcp`'s flags is labelled `ai__subcmd__tools__subcmd__mcp` (the hyphen as
/// the subcommand separator), so no command's flags are ever offered. The
/// arms' labels are respelled as the loop spells them; a script without the
/// mangled spelling (a fixed clap_complete) is left as it is.
fn mend_bash(script: &str, bin: &str) -> String {
    let state = bin.replace('-', "__");
    let mangled = bin.replace('-', "__subcmd__");
    if state == mangled {
        return script.to_owned();
    }
    script
        .split_inclusive('\n')
        .map(|line| {
            let label = line.trim_start();
            let indent = &line[..line.len() - label.len()];
            match label.strip_prefix(&mangled) {
                Some(rest) if rest.starts_with("__subcmd__") && rest.trim_end().ends_with(')') => {
                    format!("{indent}{state}{rest}")
                }
                _ => line.to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state the loop can set `cmd` to has its arm.
    #[test]
    fn each_state_of_the_bash_script_has_its_arm() {
        let script = script(Shell::Bash);
        let states: Vec<&str> = script
            .lines()
            .filter_map(|line| line.trim().strip_prefix("cmd=\"")?.strip_suffix('"'))
            .filter(|state| !state.is_empty())
            .collect();
        assert!(states.contains(&"ai__tools__subcmd__mcp"), "{states:?}");
        for state in states {
            assert!(
                script
                    .lines()
                    .any(|line| line.trim() == format!("{state})")),
                "no arm for {state}"
            );
        }
        assert!(!script.contains("ai__subcmd__tools"), "{script}");
    }

    #[test]
    fn a_script_without_the_mangled_spelling_is_left_as_it_is() {
        let fixed = "        ai__tools__subcmd__mcp)\n            opts=\"--grpc\"\n";
        assert_eq!(mend_bash(fixed, "ai-tools"), fixed);
        assert_eq!(mend_bash("x\n", "tools"), "x\n");
        assert_eq!(
            mend_bash("  ai__subcmd__tools__subcmd__mcp)\n", "ai-tools"),
            "  ai__tools__subcmd__mcp)\n"
        );
    }
}
