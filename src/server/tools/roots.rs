//! What every answer says while a transcripts directory (the projects dir, a `--source` root)
//! does not exist or holds no transcript: a note naming it in backticks and what to pass
//! instead, so that a typo does not read as "no past conversations". The directory stays
//! watched for and is indexed once it appears.
use super::budget;
use crate::corpus::{Snapshot, SourceHealth};

/// At most this many directories are named in one note; index_status lists them all.
const NAMED: usize = 3;

/// Why a directory yields nothing, if it does.
fn absent(h: &SourceHealth, complete: bool) -> Option<&'static str> {
    if !h.exists {
        Some("does not exist")
    } else if h.files == 0 && complete {
        // during the first build its files may not be counted yet
        Some("holds no transcript")
    } else {
        None
    }
}

/// The flag that names a directory of `format`.
fn flag(format: &str) -> String {
    if format == crate::transcript::default_adapter().name() {
        "--projects-dir DIR".to_owned()
    } else {
        format!("--source {format}:DIR")
    }
}

/// The sentence about one directory that yields nothing (`short`: for small budgets).
pub(crate) fn sentence(h: &SourceHealth, complete: bool, short: bool) -> Option<String> {
    let why = absent(h, complete)?;
    let path = h.path.display().to_string();
    Some(if short {
        format!(
            "`{}` {why}: pass {}.",
            budget::clip(&path, 60),
            flag(h.format)
        )
    } else {
        format!(
            "The {} transcripts directory `{path}` {why}, so nothing is indexed from it; pass {} \
             naming the folder that holds the transcripts (this one is watched for and indexed \
             once it appears).",
            h.format,
            flag(h.format)
        )
    })
}

/// The note for every answer while directories yield nothing: those of formats that no other
/// directory holds transcripts for (a format with several default locations, one missing, is
/// not flagged). None when every format has transcripts somewhere.
pub(crate) fn note(snap: &Snapshot, short: bool) -> Option<String> {
    let sources = &snap.stats.sources;
    let flagged: Vec<String> = sources
        .iter()
        .filter(|h| {
            !sources
                .iter()
                .any(|o| o.format == h.format && o.exists && o.files > 0)
        })
        .filter_map(|h| sentence(h, snap.complete, short))
        .collect();
    if flagged.is_empty() {
        return None;
    }
    let mut out = flagged[..flagged.len().min(NAMED)].join(" ");
    if flagged.len() > NAMED {
        out.push_str(&format!(
            " {} more directories yield nothing (index_status lists them).",
            flagged.len() - NAMED
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn health(format: &'static str, path: &str, exists: bool, files: u64) -> SourceHealth {
        SourceHealth {
            format,
            path: PathBuf::from(path),
            exists,
            files,
            ..SourceHealth::default()
        }
    }

    #[test]
    fn missing_and_empty_directories_are_named_with_the_flag_to_pass() {
        let default = crate::transcript::default_adapter().name();
        let gone = health(default, "/x/projcts", false, 0);
        let s = sentence(&gone, true, false).expect("missing");
        assert!(s.contains("`/x/projcts` does not exist"), "{s}");
        assert!(s.contains("--projects-dir DIR"), "{s}");
        let short = sentence(&gone, false, true).expect("missing, short");
        assert!(short.len() < 80, "{short}");
        let empty = health("gemini", "/x/g", true, 0);
        assert_eq!(sentence(&empty, false, false), None, "not counted yet");
        let s = sentence(&empty, true, false).expect("empty");
        assert!(s.contains("`/x/g` holds no transcript"), "{s}");
        assert!(s.contains("--source gemini:DIR"), "{s}");
        assert_eq!(
            sentence(&health("gemini", "/x/g", true, 2), true, false),
            None
        );
    }

    #[test]
    fn a_format_with_transcripts_elsewhere_is_not_flagged() {
        let mut snap = Snapshot {
            complete: true,
            ..Snapshot::default()
        };
        snap.stats.sources = vec![
            health("gemini", "/a", false, 0),
            health("gemini", "/b", true, 3),
        ];
        assert_eq!(note(&snap, false), None);
        snap.stats.sources = (0..5)
            .map(|i| health("gemini", if i == 0 { "/a" } else { "/b" }, false, 0))
            .collect();
        let n = note(&snap, true).expect("flagged");
        assert!(n.contains("2 more directories"), "{n}");
    }
}
