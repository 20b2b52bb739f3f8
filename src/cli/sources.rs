//! `--source FORMAT[:PATH]`: which transcript directories to index, resolved to index roots.
use crate::corpus::Root;
use crate::transcript::{self, adapter, format_names};
use crate::util::glob::Glob;
use std::path::{Path, PathBuf};

/// One `--source` argument as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceArg {
    pub format: &'static str,
    pub path: Option<PathBuf>,
}

/// Parses `FORMAT` or `FORMAT:PATH` (clap value parser; errors exit with status 2).
pub fn parse_source(s: &str) -> Result<SourceArg, String> {
    let (name, path) = match s.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    let Some(a) = adapter(name) else {
        return Err(format!(
            "unknown format `{name}`; expected one of: {}",
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
pub fn projects_dir(flag: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = flag {
        return Ok(dir.to_owned());
    }
    transcript::default_location(transcript::default_adapter()).ok_or_else(|| {
        "cannot find the projects directory: HOME is not set; pass --projects-dir DIR".to_owned()
    })
}

/// Index roots for the given sources: without `--source`, the default format (Claude Code)
/// under the projects directory only. `pattern` filters the groups of formats that have them
/// (Claude Code project directories).
pub fn roots(
    sources: &[SourceArg],
    projects: Option<&Path>,
    pattern: &str,
) -> Result<Vec<Root>, String> {
    let default = transcript::default_adapter();
    let mut out: Vec<Root> = Vec::new();
    let list: Vec<SourceArg> = if sources.is_empty() {
        vec![SourceArg {
            format: default.name(),
            path: None,
        }]
    } else {
        sources.to_vec()
    };
    for s in list {
        let Some(a) = adapter(s.format) else { continue };
        let dir = match s.path {
            Some(p) => p,
            None if a.name() == default.name() => projects_dir(projects)?,
            None => transcript::default_location(a)
                .ok_or("HOME is not set; give the path as FORMAT:PATH")?,
        };
        if dir.is_file() {
            return Err(format!(
                "`{}` is a file, but the {} source needs the directory that holds its transcripts",
                dir.display(),
                s.format
            ));
        }
        if !dir.exists() {
            tracing::warn!(
                "{} transcripts directory `{}` does not exist yet; starting without it and watching for it",
                s.format,
                dir.display()
            );
        }
        let pattern = Glob::new(if a.filters_groups() { pattern } else { "*" });
        if !out
            .iter()
            .any(|r| r.dir == dir && r.adapter.name() == s.format)
        {
            out.push(Root {
                adapter: a,
                dir,
                pattern,
            });
        }
    }
    Ok(out)
}
