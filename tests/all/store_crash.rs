//! Crash safety through the binary: servers killed with SIGKILL at random points of their first
//! build and of live updates, 100 times over; after each kill the store must open and hold at
//! least everything committed before it (conversations and turns never go backwards), and the
//! last server finds every turn ever written, including those whose transcript was deleted.

use crate::common::bin_path;
use crate::common::store::{StoreEnv, wait_stored};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A small deterministic generator (no dependency, reproducible failures).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

fn session_id(i: usize) -> String {
    format!("c7a50000-0000-4000-8000-{i:012}")
}

#[test]
fn a_hundred_kill_9s_never_lose_a_committed_turn() {
    let env = StoreEnv::new();
    let project = env.projects.project("-home-u-crash");
    let mut writers = Vec::new();
    for i in 0..8 {
        let mut w = project.session(&session_id(i));
        w.exchange(&format!("seed prompt crashtok{i}"), "seed reply");
        writers.push(w);
    }
    let mut rng = Lcg(0x5eed);
    let (mut convs, mut turns) = (0u64, 0u64);
    let mut deleted = 0;
    for round in 0..100 {
        // new work: a new session, an append to an earlier one, now and then a deletion
        let id = 8 + round;
        let mut w = project.session(&session_id(id));
        w.exchange(&format!("round prompt crashtok{id}"), "round reply");
        writers.push(w);
        let k = rng.next(writers.len() as u64) as usize;
        if writers[k].path().exists() {
            writers[k].exchange(&format!("appended crashapp{round}"), "more");
        }
        if round % 10 == 5 {
            std::fs::remove_file(writers[deleted].path()).unwrap();
            deleted += 1;
        }
        let mut child = Command::new(bin_path())
            .args(env.args(&["serve"]))
            .env("HOME", env.data.path())
            .env("CONVERSATION_SEARCH_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        std::thread::sleep(Duration::from_millis(rng.next(300)));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        let st = env.store_status_cli();
        // a server killed before it opened the store leaves none (only ever in early rounds)
        assert!(
            st["exists"] == true || convs == 0,
            "round {round}: the store vanished: {st}"
        );
        let (c, t) = (
            st["conversations"].as_u64().unwrap(),
            st["turns"].as_u64().unwrap(),
        );
        assert!(
            c >= convs && t >= turns,
            "round {round}: lost commits: {st} after {convs}/{turns}"
        );
        (convs, turns) = (c, t);
    }
    // a last server finds every turn ever written
    let s = env.serve(&[]);
    let total: u64 = 8 + 100 + 100; // seeds, rounds, at most one append per round
    let appended = (0..100)
        .filter(|r| !s.hits(&format!("crashapp{r}")).is_empty())
        .count() as u64;
    wait_stored(&s, total - (100 - appended));
    for i in 0..108 {
        assert_eq!(s.hits(&format!("crashtok{i}")).len(), 1, "crashtok{i}");
    }
    assert!(appended > 50, "appends found: {appended}");
}
