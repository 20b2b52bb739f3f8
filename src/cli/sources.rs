//! `--source FORMAT[:PATH]`: which transcript directories to index, resolved to index roots.
use crate::corpus::Root;
use crate::transcript::{self, ADAPTERS, Adapter, adapter, format_names};
use crate::util::glob::Glob;
use std::path::{Path, PathBuf};

/// One `--source` argument as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceArg {
    pub format: &'static str,
    pub path: Option<PathBuf>,
}

/// `--source auto`: every agent whose default location exists.
pub(crate) const AUTO: &str = "auto";

/// Parses `FORMAT`, `FORMAT:PATH` or `auto` (clap value parser; errors exit with status 2).
pub(crate) fn parse_source(s: &str) -> Result<SourceArg, String> {
    let (name, path) = match s.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    if name == AUTO {
        return match path {
            None => Ok(SourceArg {
                format: AUTO,
                path: None,
            }),
            Some(_) => Err(format!(
                "`{AUTO}` takes no path: it indexes every agent whose default location exists"
            )),
        };
    }
    let Some(a) = adapter(name) else {
        return Err(format!(
            "unknown format `{name}`; expected `{AUTO}` or one of: {}",
            format_names()
        ));
    };
    let path = match path {
        Some("") => {
            return Err(format!(
                "empty path in `{s}`; use `{name}` alone for the default location"
            ));
        }
        Some(p) => Some(expand_home(p)),
        None => None,
    };
    Ok(SourceArg {
        format: a.name(),
        path,
    })
}

/// Expands a leading `~/`.
fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), transcript::home_dir()) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(p),
    }
}

/// The default format's directory (Claude Code's projects directory): the flag, else the
/// format's own default (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`).
pub(crate) fn projects_dir(flag: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = flag {
        return Ok(dir.to_owned());
    }
    transcript::default_location(transcript::default_adapter()).ok_or_else(|| {
        "cannot find the projects directory: HOME is not set; pass --projects-dir DIR".to_owned()
    })
}

/// Where `a` keeps transcripts: the default format's projects directory, else the format's
/// default locations.
fn default_dirs(a: &dyn Adapter, projects: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    if a.name() == transcript::default_adapter().name() {
        return Ok(vec![projects_dir(projects)?]);
    }
    transcript::default_locations(a).map_err(|why| {
        format!(
            "`--source {0}` needs a path: {why}; use `--source {0}:DIR`",
            a.name()
        )
    })
}

/// Index roots for the given sources: without `--source`, the default format (Claude Code)
/// under the projects directory only. `pattern` filters the groups of formats that have them
/// (Claude Code project directories).
pub(crate) fn roots(
    sources: &[SourceArg],
    projects: Option<&Path>,
    pattern: &str,
) -> Result<Vec<Root>, String> {
    let mut out: Vec<Root> = Vec::new();
    let list: Vec<SourceArg> = if sources.is_empty() {
        vec![SourceArg {
            format: transcript::default_adapter().name(),
            path: None,
        }]
    } else {
        sources.to_vec()
    };
    for s in list {
        if s.format == AUTO {
            for (a, dir) in auto_roots(projects) {
                push_root(&mut out, a, dir, pattern)?;
            }
            continue;
        }
        let Some(a) = adapter(s.format) else { continue };
        let dirs = match s.path {
            Some(p) => vec![p],
            None => default_dirs(a, projects)?,
        };
        for dir in dirs {
            push_root(&mut out, a, dir, pattern)?;
        }
    }
    Ok(out)
}

/// `--source auto`: the default locations of every registered agent that exist now (agents
/// whose transcripts live in each project have none). With none at all, Claude Code's, which
/// is then watched for.
fn auto_roots(projects: Option<&Path>) -> Vec<(&'static dyn Adapter, PathBuf)> {
    let mut found = Vec::new();
    for &a in ADAPTERS {
        let dirs = default_dirs(a, projects).unwrap_or_default();
        found.extend(dirs.into_iter().filter(|d| d.is_dir()).map(|d| (a, d)));
    }
    for (a, d) in &found {
        tracing::info!(
            "--source auto: indexing {} transcripts under `{}`",
            a.name(),
            d.display()
        );
    }
    if found.is_empty() {
        tracing::warn!("--source auto: no agent's default transcript location exists yet");
        if let Ok(d) = projects_dir(projects) {
            found.push((transcript::default_adapter(), d));
        }
    }
    found
}

/// Adds a root unless the same directory of the same format is already there.
fn push_root(
    out: &mut Vec<Root>,
    a: &'static dyn Adapter,
    dir: PathBuf,
    pattern: &str,
) -> Result<(), String> {
    let format = a.name();
    let dir = canonical(&dir);
    if dir.is_file() {
        return Err(format!(
            "`{}` is a file, but the {format} source needs the directory that holds its transcripts",
            dir.display(),
        ));
    }
    if out
        .iter()
        .any(|r| r.dir == dir && r.adapter.name() == format)
    {
        return Ok(());
    }
    if !dir.exists() {
        tracing::warn!(
            "{format} transcripts directory `{}` does not exist yet; starting without it and watching for it",
            dir.display()
        );
    }
    let pattern = Glob::new(if a.filters_groups() { pattern } else { "*" });
    out.push(Root {
        adapter: a,
        dir,
        pattern,
    });
    Ok(())
}

/// One spelling per directory, so relative, absolute and symlinked spellings are one root: the
/// canonical path when it exists, else the absolute path with its nearest existing ancestor
/// canonicalised (the directory may appear later).
fn canonical(dir: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(dir) {
        return c;
    }
    let Ok(abs) = std::path::absolute(dir) else {
        return dir.to_owned();
    };
    let mut missing = Vec::new();
    let mut at = abs.as_path();
    while let Some(parent) = at.parent() {
        missing.push(at.file_name().unwrap_or_default().to_owned());
        if let Ok(c) = std::fs::canonicalize(parent) {
            return missing.iter().rev().fold(c, |p, name| p.join(name));
        }
        at = parent;
    }
    abs
}
