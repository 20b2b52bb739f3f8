//! A progress bar on stderr for a first index build that takes longer than a second, when
//! stderr is a terminal (files, MB, turns, rate, ETA); nothing otherwise. Built on indicatif.
use crate::corpus::Shared;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a build runs before the bar appears.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// A running bar (or nothing, off a terminal).
pub(super) struct Bar {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// Starts watching `shared`'s build progress.
    pub(super) fn start(shared: Arc<Shared>) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if !std::io::stderr().is_terminal() {
            return Self { done, thread: None };
        }
        let flag = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || draw(&shared, &flag))
            .ok();
        Self { done, thread }
    }

    /// Stops and clears the bar.
    pub(super) fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn draw(shared: &Shared, done: &AtomicBool) {
    let started = Instant::now();
    while started.elapsed() < DELAY {
        if done.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(TICK);
    }
    let p = &shared.progress;
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(p.bytes_total.load(Ordering::Relaxed)),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let style = indicatif::ProgressStyle::with_template(
        "indexing {wide_bar} {bytes}/{total_bytes} {msg} {bytes_per_sec} ETA {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    while !done.load(Ordering::Relaxed) {
        bar.set_length(p.bytes_total.load(Ordering::Relaxed));
        bar.set_position(p.bytes_done.load(Ordering::Relaxed));
        bar.set_message(format!(
            "· {}/{} files · {} turns ·",
            p.files_done.load(Ordering::Relaxed),
            p.files_total.load(Ordering::Relaxed),
            p.turns_done.load(Ordering::Relaxed)
        ));
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}
