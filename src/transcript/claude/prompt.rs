//! What counts as a human prompt in a Claude Code `user` record: harness wrappers
//! (slash-command and local-command tags) and interrupt markers are not, and IDE context
//! elements (and tool-output previews) are stripped from the prompts that are.
use crate::transcript::markup::strip_elements;

/// Harness wrappers: a prompt made only of these is not typed by the human.
const HARNESS_TAGS: &[&str] = &[
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "task-notification",
    "system-reminder",
];

/// Stripped from a prompt's text: IDE context the editor prefixes to real prompts, and
/// `<persisted-output>` previews of a tool output spilled to disk (tool output, never indexed).
const CONTEXT_TAGS: &[&str] = &[
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "system-reminder",
    "persisted-output",
];

const INTERRUPTS: &[&str] = &[
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
];

/// The human text of a prompt, or `None` when the record is harness noise.
pub(crate) fn prompt_text(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() || INTERRUPTS.contains(&trimmed) {
        return None;
    }
    if trimmed.contains('<') {
        let mut all: Vec<&str> = HARNESS_TAGS.to_vec();
        all.extend_from_slice(CONTEXT_TAGS);
        if strip_elements(trimmed, &all).trim().is_empty() {
            return None;
        }
        let text = strip_elements(trimmed, CONTEXT_TAGS);
        let text = text.trim();
        return (!text.is_empty() && !INTERRUPTS.contains(&text)).then(|| text.to_owned());
    }
    Some(trimmed.to_owned())
}
