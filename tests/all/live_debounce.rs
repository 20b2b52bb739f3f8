//! Live-index timing through the binary: a burst of appends is applied once, after the quiet
//! period (`--debounce-ms`) and not before, with `pending_changes` counting waiting paths; a
//! file appended to continuously is still re-ingested within `--max-staleness-ms`; `--poll`
//! mode rescans every `--poll-interval-ms`.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::fixture::ProjectsDir;
use crate::common::live::{
    DEBOUNCE_MS, MARGIN, assert_invisible_until, num, serve_live, tag, visible_at, wait_hits,
    wait_idle, wait_no_hits, wait_status,
};

const SID: &str = "deb00000-0000-4000-8000-000000000001";
const OTHER: &str = "deb00000-0000-4000-8000-000000000002";

#[test]
fn status_reports_the_live_configuration() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-cfg")
        .session(SID)
        .exchange("configuration prompt", "configuration reply");
    let s = serve_live(dir, 250, &["--max-staleness-ms", "4000"]);
    let st = s.index_status();
    assert_eq!(st["watching"], true, "{st}");
    assert_eq!(st["watch_mode"], "watch", "{st}");
    assert!(st["watch_error"].is_null(), "{st}");
    assert_eq!(num(&st, "debounce_ms"), 250, "{st}");
    assert_eq!(num(&st, "max_staleness_ms"), 4000, "{st}");
    assert_eq!(
        num(&st, "updates"),
        0,
        "the first build is not an update: {st}"
    );
    assert_eq!(num(&st, "pending_changes"), 0, "{st}");
    for k in [
        "files_added",
        "files_appended",
        "files_reread",
        "files_removed",
    ] {
        assert_eq!(num(&st, k), 0, "{k}: {st}");
    }
    assert!(num(&st, "segments") >= 1, "{st}");
}

#[test]
fn pending_changes_counts_paths_waiting_for_their_quiet_period() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-pending");
    let mut a = p.session(SID);
    a.exchange("first", "reply");
    let mut b = p.session(OTHER);
    b.exchange("second", "reply");
    let s = serve_live(dir, 1500, &[]);
    a.exchange("pendingone prompt", "reply");
    b.exchange("pendingtwo prompt", "reply");
    // both paths wait (1.5 s) before either is applied
    let st = wait_status(&s, "pending_changes == 2", |st| {
        num(st, "pending_changes") == 2 || num(st, "updates") > 0
    });
    assert_eq!(num(&st, "pending_changes"), 2, "{st}");
    assert_eq!(num(&st, "updates"), 0, "{st}");
    wait_hits(&s, "pendingone");
    wait_hits(&s, "pendingtwo");
    let st = wait_idle(&s);
    assert_eq!(num(&st, "files_appended"), 2, "{st}");
}

/// One burst: `n` appends spaced `gap` apart. Returns the words, the instant after the last
/// write, and the index of the first write after the last pause longer than `limit` (0 when
/// the machine kept up: every write belongs to one burst).
fn burst(
    w: &mut common::fixture::SessionWriter,
    attempt: usize,
    n: usize,
    gap: Duration,
    limit: Duration,
) -> (Vec<String>, Instant, usize) {
    let words: Vec<String> = (0..n).map(|i| tag(&tag("burst", attempt), i)).collect();
    let mut last = Instant::now();
    let mut run_start = 0;
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(gap);
            if last.elapsed() > limit {
                run_start = i;
            }
        }
        let t = Instant::now();
        w.exchange(&format!("burst prompt {word}"), "noted, continuing");
        if t.elapsed() > limit {
            // stalled between the prompt and the reply: the prompt may be applied alone
            run_start = i + 1;
        }
        last = Instant::now();
    }
    (words, last, run_start)
}

#[test]
fn a_burst_of_appends_is_applied_once_after_the_quiet_period() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-burst");
    let mut w = p.session(SID);
    w.exchange("initial prompt about kestrels", "initial reply");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let debounce = Duration::from_millis(DEBOUNCE_MS);
    // A burst only counts when no pause between its writes came near the debounce (a stalled
    // CI machine); otherwise only its last run is checked, and it is retried.
    for attempt in 0..3 {
        let before = wait_idle(&s);
        let (words, last_write, run_start) =
            burst(&mut w, attempt, 6, Duration::from_millis(40), debounce / 2);
        // No append of the final run may be applied before the path was quiet for the
        // debounce period (events arrive after the write, so last_write is a lower bound).
        let checks = if run_start < words.len() {
            assert_invisible_until(&s, &words[run_start..].join(" "), last_write + debounce)
        } else {
            0
        };
        let seen = visible_at(&s, &words.join(" "), last_write + debounce + MARGIN);
        for word in &words {
            assert_eq!(
                wait_hits(&s, word).len(),
                1,
                "{word} must be searchable once"
            );
        }
        let after = wait_idle(&s);
        eprintln!(
            "attempt {attempt}: run from write {run_start}, {checks} early checks, visible after {:?}",
            seen - last_write
        );
        let turns = s.read_conversation(SID)["total_turns"].as_u64().unwrap();
        assert_eq!(turns, 1 + 6 * (attempt as u64 + 1));
        if run_start > 0 || checks == 0 {
            eprintln!("attempt {attempt}: this machine was too slow to make a burst; retrying");
            continue;
        }
        assert_eq!(
            num(&after, "updates"),
            num(&before, "updates") + 1,
            "a burst of {} appends must cause one update\nbefore: {before}\nafter: {after}",
            words.len()
        );
        assert_eq!(
            num(&after, "files_appended"),
            num(&before, "files_appended") + 1,
            "one incremental read of the file\nbefore: {before}\nafter: {after}"
        );
        assert_eq!(num(&after, "files_reread"), 0, "{after}");
        assert_eq!(num(&after, "generation"), num(&before, "generation") + 1);
        return;
    }
    panic!(
        "no undisturbed burst in 3 attempts (each stalled between writes, or no search was \
         answered before the debounce period ended): the debounce was never checked"
    );
}

#[test]
fn a_file_appended_to_continuously_is_reingested_within_the_staleness_bound() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-steady");
    p.session(OTHER).exchange("unrelated", "session");
    let mut w = p.session(SID);
    w.exchange("first steady prompt", "first steady reply");
    let (debounce_ms, staleness_ms) = (500, 1500);
    let s = serve_live(dir, debounce_ms, &["--max-staleness-ms", "1500"]);
    let staleness = Duration::from_millis(staleness_ms);
    let u0 = num(&s.index_status(), "updates");

    // Append every 100 ms (always within the debounce) for up to 10 s.
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let writer = {
        let (stop, written) = (Arc::clone(&stop), Arc::clone(&written));
        std::thread::spawn(move || {
            for i in 0..100 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                w.exchange(&format!("steady prompt {}", tag("steady", i)), "ok");
                written.store(i + 1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    // The first append is applied although the file never goes quiet.
    let seen = visible_at(&s, &tag("steady", 0), started + staleness + MARGIN);
    assert!(
        !writer.is_finished(),
        "the writer finished before the first append became searchable"
    );
    eprintln!("first append searchable after {:?}", seen - started);
    // …and again one staleness period later, still while writing.
    let n = written.load(Ordering::SeqCst);
    let deadline = Instant::now() + staleness + MARGIN;
    let later = visible_at(&s, &tag("steady", n), deadline);
    assert!(
        !writer.is_finished(),
        "writes stopped before the second update"
    );
    let st = s.index_status();
    assert!(num(&st, "updates") >= u0 + 2, "{st}");
    eprintln!(
        "append {n} searchable after {:?}",
        later - started - Duration::from_millis(100 * n as u64)
    );
    stop.store(true, Ordering::SeqCst);
    writer.join().expect("writer");
    // Once quiet, everything written is searchable, each append exactly once.
    let total = written.load(Ordering::SeqCst);
    wait_hits(&s, &tag("steady", total - 1));
    wait_idle(&s);
    for i in 0..total {
        assert_eq!(s.hits(&tag("steady", i)).len(), 1, "append {i}");
    }
    assert_eq!(
        s.read_conversation(SID)["total_turns"].as_u64(),
        Some(1 + total as u64)
    );
}

/// Appends every `every` until `stop` (or `limit` appends); returns how many were written.
fn steady_writer(
    w: common::fixture::SessionWriter,
    prefix: &'static str,
    every: Duration,
    limit: usize,
    stop: Arc<AtomicBool>,
    written: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        // one open file, as a process streaming into it keeps it (only modify events)
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(w.path())
            .expect("open");
        for i in 0..limit {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let line = common::live::render(w.session_id(), |r| {
                r.user(&format!("rapid prompt {}", tag(prefix, i)));
            });
            std::io::Write::write_all(&mut f, &line).expect("append");
            written.store(i + 1, Ordering::SeqCst);
            std::thread::sleep(every);
        }
    })
}

#[test]
fn the_staleness_bound_holds_for_writes_faster_than_the_event_coalescing() {
    // Writes every 15 ms through one open file: more often than any coalescing window of the
    // watcher (at most 50 ms), as when a process streams records into a transcript.
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-rapid");
    let mut w = p.session(SID);
    w.exchange("first rapid prompt", "first rapid reply");
    let s = serve_live(dir, 500, &["--max-staleness-ms", "1500"]);
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let writer = steady_writer(
        w,
        "rapid",
        Duration::from_millis(15),
        600,
        Arc::clone(&stop),
        Arc::clone(&written),
    );
    let deadline = started + Duration::from_millis(1500) + MARGIN;
    let seen = loop {
        if !s.hits(&tag("rapid", 0)).is_empty() {
            break Instant::now();
        }
        if Instant::now() > deadline {
            let n = written.load(Ordering::SeqCst);
            stop.store(true, Ordering::SeqCst);
            writer.join().expect("writer");
            let st = s.index_status();
            panic!(
                "the first of {n} appends (one every 15 ms) was not searchable {:?} after it was written, although --max-staleness-ms is 1500\nstatus: {st}",
                started.elapsed()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let still_writing = !writer.is_finished();
    stop.store(true, Ordering::SeqCst);
    writer.join().expect("writer");
    assert!(still_writing, "the writer finished first");
    eprintln!("first rapid append searchable after {:?}", seen - started);
}

#[test]
fn poll_mode_picks_up_changes_within_the_interval() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-poll");
    let mut w = p.session(SID);
    w.exchange("polled prompt", "polled reply");
    p.session(OTHER)
        .exchange("doomed pollgoner prompt", "reply");
    let interval = Duration::from_millis(500);
    let s = serve_live(
        dir,
        DEBOUNCE_MS,
        &["--poll", "--poll-interval-ms", "500", "--no-archive"],
    );
    let st = s.index_status();
    assert_eq!(st["watch_mode"], "poll", "{st}");
    assert_eq!(st["watching"], false, "{st}");
    assert!(st["watch_error"].is_null(), "--poll is not an error: {st}");

    // an append
    let t = Instant::now();
    w.exchange("appended pollappend prompt", "reply");
    let seen = visible_at(&s, "pollappend", t + interval + MARGIN);
    eprintln!("append searchable after {:?}", seen - t);
    assert_eq!(s.hits("pollappend"), vec![(SID.to_string(), 1)]);

    // a new project directory with a session
    let t = Instant::now();
    s.dir
        .project("-home-u-pollnew")
        .session("deb00000-0000-4000-8000-000000000003")
        .exchange("brand new pollfresh prompt", "reply");
    visible_at(&s, "pollfresh", t + interval + MARGIN);

    // a deleted file
    std::fs::remove_file(
        s.dir
            .path()
            .join("-home-u-poll")
            .join(format!("{OTHER}.jsonl")),
    )
    .expect("delete");
    let t = Instant::now();
    wait_no_hits(&s, "pollgoner");
    assert!(t.elapsed() < interval + MARGIN, "{:?}", t.elapsed());
    let st = wait_status(&s, "files_removed == 1", |st| num(st, "files_removed") == 1);
    assert_eq!(num(&st, "files"), 2, "{st}");
    assert_eq!(num(&st, "sessions"), 2, "{st}");
    assert_eq!(st["watch_mode"], "poll", "{st}");
}

#[test]
fn poll_mode_finds_a_projects_directory_created_later() {
    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("projects");
    let s = common::live::serve_path(&root, DEBOUNCE_MS, &["--poll", "--poll-interval-ms", "300"]);
    assert_eq!(s.index_status()["watch_mode"], "poll");
    let project = root.join("-home-u-polled");
    std::fs::create_dir_all(&project).expect("mkdir -p");
    let t = Instant::now();
    common::live::append(
        &project.join(format!("{SID}.jsonl")),
        &common::live::render(SID, |r| {
            r.exchange("polled into existence auklet", "reply");
        }),
    );
    visible_at(&s, "auklet", t + Duration::from_millis(300) + MARGIN);
    assert_eq!(num(&s.index_status(), "sessions"), 1);
}
