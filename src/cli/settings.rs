//! The command line and the environment resolved once into what an indexing command (`serve`,
//! `search`, `list`, `show`, `status`, `context`) uses, the way ripgrep turns its low-level
//! arguments into high-level ones: the index roots, this project, the persistent index, the
//! durable store, the live schedule and how results print. Each command reads this value and
//! none reads the raw flags again; [`Settings::shared`] and [`Settings::writer`] assemble the
//! corpus from it in one place.
use super::output::Mode;
use super::{GlobalArgs, UsageError, human, sources};
use crate::cache::Cache;
use crate::corpus::project::Project;
use crate::corpus::writer::Writer;
use crate::corpus::{Root, Shared, Snapshot, StoreConfig};
use crate::live::LiveConfig;
use crate::server::ToolError;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What an indexing command runs with, resolved once.
pub(crate) struct Settings {
    /// The transcript directories indexed.
    pub roots: Vec<Root>,
    /// The project the server works for.
    pub project: Arc<Project>,
    /// The persistent index, unless `--no-cache` (or no cache directory).
    pub cache: Option<Cache>,
    /// The durable store, unless `--no-store`, `--no-redact` or no data directory.
    pub store: Option<StoreConfig>,
    /// The debounce, staleness and polling schedule.
    pub live: LiveConfig,
    /// How a one-shot command prints its result.
    pub mode: Mode,
}

impl Settings {
    /// Resolves `global` for the roots `pattern` selects (a glob over project directory names;
    /// none: all). Fails on `--source` arguments that name nothing usable.
    pub(crate) fn resolve(global: &GlobalArgs, pattern: Option<&str>) -> anyhow::Result<Settings> {
        let roots = roots(global, pattern)?;
        let store = store_config(global);
        let cache = cache_for(global, &roots, store.as_ref());
        Ok(Settings {
            project: Arc::new(project(global)),
            live: live_config(global),
            mode: mode(global),
            roots,
            cache,
            store,
        })
    }

    /// An empty index over these roots for this project, which a writer fills.
    pub(crate) fn shared(&self) -> Arc<Shared> {
        Shared::new(Snapshot {
            roots: Arc::new(self.roots.clone()),
            project: Arc::clone(&self.project),
            ..Snapshot::default()
        })
    }

    /// A one-shot command's writer of `shared`, the store opened (it stores what it reads and
    /// shows conversations only the store holds).
    pub(crate) fn writer(&self, shared: &Arc<Shared>) -> Writer {
        let mut writer = Writer::new(self.roots.clone(), Arc::clone(shared));
        if let Some(cfg) = &self.store {
            writer.open_store(cfg);
        }
        writer
    }
}

/// The data directory: `--data-dir`, else the default.
pub(crate) fn data_dir(global: &GlobalArgs) -> Option<PathBuf> {
    global.data_dir.clone().or_else(crate::store::default_dir)
}

/// The data directory of a store command (`forget`, `store status`, `export`, `import`), or
/// what to pass when there is none.
pub(crate) fn store_dir(global: &GlobalArgs) -> Result<PathBuf, ToolError> {
    data_dir(global)
        .ok_or_else(|| ToolError::new("no data directory: HOME is not set; pass --data-dir DIR"))
}

/// Whether the store is kept: always (the older `--archive` is still accepted), except with
/// `--no-store`, with `--no-redact`, or without a home directory or `--data-dir`.
fn store_config(global: &GlobalArgs) -> Option<StoreConfig> {
    if global.no_store {
        return None;
    }
    if !crate::redact::enabled() {
        // the store holds only redacted text
        tracing::warn!("--no-redact: the durable store is not used (it holds only redacted text)");
        return None;
    }
    Some(StoreConfig {
        dir: data_dir(global)?,
        retain_days: global.retain_days,
    })
}

/// The index roots of `--source` and `--projects-dir` that `pattern` selects.
fn roots(global: &GlobalArgs, pattern: Option<&str>) -> anyhow::Result<Vec<Root>> {
    let roots = sources::roots(
        &global.source,
        global.projects_dir.as_deref(),
        pattern.unwrap_or("*"),
    )
    .map_err(UsageError)?;
    for r in &roots {
        if r.adapter.name() == crate::transcript::default_adapter().name() && !r.dir.exists() {
            tracing::info!(
                "projects directory `{}` does not exist yet; starting with an empty index",
                r.dir.display()
            );
        }
    }
    Ok(roots)
}

/// The persistent index for these roots and store, unless disabled.
fn cache_for(global: &GlobalArgs, roots: &[Root], store: Option<&StoreConfig>) -> Option<Cache> {
    if global.no_cache {
        return None;
    }
    let dir = global
        .cache_dir
        .clone()
        .or_else(crate::cache::default_dir)?;
    let store = store.map(|s| s.dir.as_path());
    Some(crate::corpus::cache_for(dir, roots, store))
}

/// The project: `--project-root`, else the current directory.
fn project(global: &GlobalArgs) -> Project {
    let root = global
        .project_root
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    Project::discover(&root, !global.no_project_prior)
}

fn live_config(global: &GlobalArgs) -> LiveConfig {
    LiveConfig {
        debounce: Duration::from_millis(global.debounce_ms),
        max_staleness: Duration::from_millis(global.max_staleness_ms),
        poll_interval: Duration::from_millis(global.poll_interval_ms.max(10)),
        force_poll: global.poll,
    }
}

/// JSON when asked for or when stdout is no terminal (unless `--color always`), else text.
fn mode(global: &GlobalArgs) -> Mode {
    let terminal = std::io::stdout().is_terminal();
    let forced = global.color == human::ColorChoice::Always;
    if global.json || !(terminal || forced) {
        return Mode::Json;
    }
    let no_color = std::env::var("NO_COLOR").ok();
    Mode::Human(human::Paint {
        on: global.color.enabled(terminal, no_color.as_deref()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn settings(args: &[&str]) -> Settings {
        let mut argv = vec!["conversation-search"];
        argv.extend_from_slice(args);
        let cli = super::super::Cli::try_parse_from(argv).expect("parses");
        Settings::resolve(&cli.global, None).expect("resolves")
    }

    #[test]
    fn the_store_and_the_cache_are_resolved_together() {
        let dir = tempfile::tempdir().unwrap();
        let projects = dir.path().join("projects");
        let data = dir.path().join("data");
        let cache = dir.path().join("cache");
        let p = |p: &std::path::Path| p.to_string_lossy().into_owned();
        let (projects, data, cache) = (p(&projects), p(&data), p(&cache));
        let s = settings(&[
            "--projects-dir",
            &projects,
            "--data-dir",
            &data,
            "--cache-dir",
            &cache,
            "--retain-days",
            "9",
            "--json",
        ]);
        let store = s.store.as_ref().expect("a store");
        assert_eq!(store.dir, std::path::Path::new(&data));
        assert_eq!(store.retain_days, Some(9));
        assert!(s.cache.is_some());
        assert!(matches!(s.mode, Mode::Json));
        assert_eq!(s.roots.len(), 1);
        let without = settings(&[
            "--projects-dir",
            &projects,
            "--cache-dir",
            &cache,
            "--no-store",
        ]);
        assert!(without.store.is_none() && without.cache.is_some());
        assert!(
            settings(&["--projects-dir", &projects, "--no-cache"])
                .cache
                .is_none()
        );
    }

    #[test]
    fn the_corpus_starts_empty_with_the_roots_and_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let projects = dir.path().to_string_lossy().into_owned();
        let root = dir.path().to_string_lossy().into_owned();
        let s = settings(&[
            "--projects-dir",
            &projects,
            "--project-root",
            &root,
            "--no-store",
        ]);
        let snap = s.shared().snapshot();
        assert_eq!(snap.roots.len(), 1);
        assert_eq!(snap.project.root.as_deref(), Some(dir.path()));
    }
}
