//! Black-box tests of redaction and the durable store: secrets never reach the store's files,
//! and a rules change redacts again, in place and on disk, the turns only the store still
//! holds (their transcript is gone).

use crate::common::mcp::McpClient;
use crate::common::poll_until_desc;
use crate::common::store::{StoreEnv, tree_bytes, wait_presence, wait_stored};
use std::path::Path;
use std::time::Duration;

const SESSION: &str = "5ec0e000-0000-4000-8000-000000000000";
/// Built from pieces so that this source file does not hold a key-shaped literal.
fn aws_key() -> String {
    format!("AKIA{}", "QX7Z2MV4LJ3KT8WB")
}

/// An AWS secret access key (40 base64 characters), from pieces as above.
fn aws_secret() -> String {
    format!("{}/{}", "wJalrXUtnFEMI/K7MDENG", "bPxRfiCYQXZ2MV4LJ3")
}

fn holds(root: &Path, needle: &str) -> bool {
    tree_bytes(root)
        .values()
        .any(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

/// A server over `env` with extra environment variables, its first build done.
fn serve(env: &StoreEnv, vars: &[(&str, &str)]) -> McpClient {
    let c = McpClient::spawn(&env.args(&[]), vars);
    c.initialize();
    c.wait_ready();
    c
}

#[test]
fn secrets_never_reach_the_store_and_a_rules_change_redacts_stored_turns_again() {
    let env = StoreEnv::new();
    // an in-house secret shape no built-in rule knows (stored as written under rules N), and a
    // built-in kind; each turn short enough to be stored uncompressed, so its bytes are
    // visible in the files
    let inhouse = format!("zq-{}", 583_920_175 + u64::from(std::process::id() % 1000));
    let mut s = env.projects.project("-work-vault").session(SESSION);
    s.exchange(&format!("deploy code {inhouse}"), "ok");
    s.exchange(
        &format!("key {} and secret {}", aws_key(), aws_secret()),
        "noted",
    );
    let transcript = s.path().to_path_buf();

    let before = serve(&env, &[]);
    wait_stored(&before, 2);
    assert!(
        !before.hits(&inhouse).is_empty(),
        "not a secret under rules N"
    );
    assert!(before.hits(&aws_key()).is_empty());
    drop(before);
    let data = env.data.path();
    assert!(
        holds(data, &inhouse),
        "rules N store it as written (the bytes are visible)"
    );
    assert!(
        holds(data, "[REDACTED:aws_access_key_id]"),
        "the built-in kind is stored redacted"
    );
    assert!(
        !holds(data, &aws_key()),
        "a built-in secret reached the store"
    );
    assert!(
        holds(data, "[REDACTED:aws_secret_key]") && !holds(data, &aws_secret()),
        "the secret key next to its id is stored redacted"
    );

    // the transcript goes: the store alone holds the turns; rules N+1 know the in-house shape
    std::fs::remove_file(&transcript).expect("remove transcript");
    let vars = [("CONVERSATION_SEARCH_REDACT_EXTRA", r"zq-[0-9]{9}")];
    let after = serve(&env, &vars);
    wait_presence(&after, SESSION, false);
    assert!(
        after.hits(&inhouse).is_empty(),
        "searchable after the rules change"
    );
    let turn = after.read_turn(SESSION, 0).to_string();
    assert!(
        !turn.contains(&inhouse) && turn.contains("[REDACTED:extra]"),
        "{turn}"
    );
    assert!(
        after.hits("deploy").len() == 1,
        "the rest of the turn stays"
    );
    drop(after);
    poll_until_desc(
        "the old text gone from the store's files",
        Duration::from_secs(10),
        || (!holds(data, &inhouse)).then_some(()),
    );
    assert!(!holds(data, &aws_key()) && !holds(data, &aws_secret()));
}
