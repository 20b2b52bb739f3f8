//! OpenCode's legacy storage tree (`storage/session/<project>/<session>.json`,
//! `storage/message/<session>/<message>.json`, `storage/part/<message>/<part>.json`): one unit
//! per session file, read whole with its messages and parts; and the way back from a message
//! or part file (or directory) to the session file it belongs to.
use super::convert::{self, Message, SessionInfo};
use crate::transcript::dir::sorted_entries;
use crate::transcript::lenient::{LNum, LStr};
use crate::transcript::{SourceFile, UnitRead, UnitReader};
use serde::Deserialize;
use std::io;
use std::path::{Path, PathBuf};

/// `<storage>/session/*/*.json`, sorted.
pub(crate) fn session_files(storage: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for project in sorted_entries(&storage.join("session"))
        .into_iter()
        .filter(|e| e.is_dir)
    {
        for f in sorted_entries(&project.path) {
            if !f.is_dir && f.name.ends_with(".json") {
                out.push(f.path);
            }
        }
    }
    out
}

/// The storage directory of a session file (`<storage>/session/<project>/<file>`).
fn storage_of(session_file: &Path) -> Option<&Path> {
    session_file.parent()?.parent()?.parent()
}

/// Whether `path` is `<storage>/session/<project>/<file>.json` under `root`.
pub(crate) fn is_session_file(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    matches!(parts.as_slice(), ["storage", "session", _, f] if f.ends_with(".json") && f.len() > 5)
}

#[derive(Deserialize, Default)]
struct Times {
    #[serde(default)]
    created: LNum,
    #[serde(default)]
    updated: LNum,
}

#[derive(Deserialize)]
struct SessionWire<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(rename = "parentID", borrow, default)]
    parent_id: LStr<'a>,
    #[serde(borrow, default)]
    title: LStr<'a>,
    #[serde(borrow, default)]
    directory: LStr<'a>,
    #[serde(borrow, default)]
    time: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct Ids<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(rename = "sessionID", borrow, default)]
    session_id: LStr<'a>,
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_owned()
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    sorted_entries(dir)
        .into_iter()
        .filter(|e| !e.is_dir && e.name.ends_with(".json"))
        .map(|e| e.path)
        .collect()
}

/// The record id inside a JSON file, else the file stem (OpenCode names files by id).
fn id_of(text: &str, path: &Path) -> String {
    serde_json::from_str::<Ids>(text)
        .ok()
        .and_then(|i| i.id.non_empty().map(str::to_owned))
        .unwrap_or_else(|| stem(path))
}

fn parse_session(path: &Path) -> io::Result<SessionInfo> {
    let text = std::fs::read_to_string(path)?;
    let w: SessionWire = serde_json::from_str(&text)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let time: Times = w
        .time
        .and_then(crate::transcript::lenient::parse)
        .unwrap_or_default();
    Ok(SessionInfo {
        id: w
            .id
            .non_empty()
            .map(str::to_owned)
            .unwrap_or_else(|| stem(path)),
        parent_id: w.parent_id.non_empty().map(str::to_owned),
        title: w.title.into_owned(),
        directory: w.directory.into_owned(),
        agent: None,
        time_created: time.created.0,
        time_updated: time.updated.0,
    })
}

/// Directories that may hold a record's children: named by its id, else by its file stem.
fn child_dirs(base: &Path, id: &str, file: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![base.join(id)];
    let s = stem(file);
    if s != id && base.join(&s).is_dir() {
        dirs.push(base.join(s));
    }
    dirs
}

/// Reads one session of the storage tree.
#[derive(Default)]
pub(crate) struct StorageReader {
    reported: Option<u64>,
    read_once: bool,
}

impl StorageReader {
    fn read_session(path: &Path) -> io::Result<(SessionInfo, Vec<Message>, u64)> {
        let info = parse_session(path)?;
        let storage = storage_of(path).unwrap_or(path);
        let mut messages = Vec::new();
        let mut skipped = 0;
        for dir in child_dirs(&storage.join("message"), &info.id, path) {
            for file in json_files(&dir) {
                let Ok(text) = std::fs::read_to_string(&file) else {
                    skipped += 1;
                    continue;
                };
                let Ok(msg) = convert::parse_message(&text) else {
                    skipped += 1;
                    continue;
                };
                let id = id_of(&text, &file);
                let mut parts = Vec::new();
                for pdir in child_dirs(&storage.join("part"), &id, &file) {
                    for pfile in json_files(&pdir) {
                        let text = std::fs::read_to_string(&pfile).unwrap_or_default();
                        match convert::parse_part(&text) {
                            Ok(part) => parts.push((id_of(&text, &pfile), part)),
                            Err(_) => skipped += 1,
                        }
                    }
                }
                messages.push(Message {
                    created: msg.created.unwrap_or(0),
                    id,
                    info: msg,
                    parts,
                });
            }
        }
        Ok((info, messages, skipped))
    }
}

impl UnitReader for StorageReader {
    fn read(&mut self, file: &SourceFile) -> io::Result<UnitRead> {
        let (info, messages, skipped) = match Self::read_session(&file.path) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound || self.read_once => return Err(e),
            // never readable (e.g. a half-written file): an empty unit until it changes
            Err(_) => {
                return Ok(UnitRead {
                    skipped: 1,
                    ..UnitRead::default()
                });
            }
        };
        self.read_once = true;
        let state = convert::build(&info, messages);
        let hash = convert::content_hash(&state);
        let mut read = UnitRead {
            present: vec![state.id.clone()],
            skipped,
            ..UnitRead::default()
        };
        if self.reported.replace(hash) != Some(hash) {
            read.changed.push(state);
        }
        Ok(read)
    }

    /// The session file, its message directory and files, and every part directory and file:
    /// any of them changing means the session changed.
    fn stamp_paths(&self, file: &SourceFile) -> Vec<PathBuf> {
        let mut out = vec![file.path.clone()];
        let Some(storage) = storage_of(&file.path) else {
            return out;
        };
        let id = std::fs::read_to_string(&file.path)
            .map(|t| id_of(&t, &file.path))
            .unwrap_or_else(|_| stem(&file.path));
        for dir in child_dirs(&storage.join("message"), &id, &file.path) {
            out.push(dir.clone());
            for m in json_files(&dir) {
                let mid = std::fs::read_to_string(&m)
                    .map(|t| id_of(&t, &m))
                    .unwrap_or_else(|_| stem(&m));
                for pdir in child_dirs(&storage.join("part"), &mid, &m) {
                    out.push(pdir.clone());
                    out.extend(json_files(&pdir));
                }
                out.push(m);
            }
        }
        out
    }
}

/// The session file under `storage` whose session id is `sid`: `<sid>.json` in some project
/// directory, else any session file whose recorded id is `sid`.
fn find_session_file(storage: &Path, sid: &str) -> Option<PathBuf> {
    let projects = sorted_entries(&storage.join("session"));
    for p in projects.iter().filter(|e| e.is_dir) {
        let candidate = p.path.join(format!("{sid}.json"));
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    session_files(storage)
        .into_iter()
        .find(|f| std::fs::read_to_string(f).is_ok_and(|t| id_of(&t, f) == sid))
}

/// The session of a message id: the directory of `<storage>/message/*/<mid>.json`.
fn session_of_message(storage: &Path, mid: &str) -> Option<String> {
    sorted_entries(&storage.join("message"))
        .into_iter()
        .filter(|e| e.is_dir)
        .find(|e| e.path.join(format!("{mid}.json")).is_file())
        .map(|e| e.name)
}

/// For a path inside `<storage>/message/` or `<storage>/part/` (a directory or a file), the
/// session file whose unit it belongs to.
pub(crate) fn session_for(path: &Path) -> Option<PathBuf> {
    let comps: Vec<&str> = path.iter().map(|c| c.to_str()).collect::<Option<_>>()?;
    let i = comps
        .iter()
        .rposition(|c| *c == "message" || *c == "part")?;
    if i == 0 || comps[i - 1] != "storage" || comps.len() <= i + 1 || comps.len() > i + 3 {
        return None;
    }
    let storage: PathBuf = path.iter().take(i).collect();
    let dir = comps[i + 1];
    let sid = if comps[i] == "message" {
        dir.to_owned()
    } else {
        let own = comps
            .get(i + 2)
            .and_then(|_| std::fs::read_to_string(path).ok());
        match own
            .as_deref()
            .and_then(|t| serde_json::from_str::<Ids>(t).ok())
        {
            Some(ids) if ids.session_id.non_empty().is_some() => {
                ids.session_id.as_deref().unwrap_or_default().to_owned()
            }
            _ => session_of_message(&storage, dir)?,
        }
    };
    find_session_file(&storage, &sid)
}
