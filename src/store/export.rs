//! `export`: the store's conversations and turns as exchange lines ([`super::exchange`]), read
//! in one read transaction, so a file written while servers commit is one commit's picture of
//! the store. Plain NDJSON, or the OpenSearch / Elasticsearch `_bulk` form (an `index` action
//! line before each document).
use super::admin::{self, Selector};
use super::exchange::{ConvLine, Line, TurnLine, Versioned};
use super::{DB_NAME, StoreError, read, schema};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The form of the lines written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Form {
    /// One record per line.
    Lines,
    /// `_bulk` body: an `{"index":{"_index":…,"_id":…}}` line before each record; turn
    /// documents also carry their conversation's `source`, `group` and `cwd` (for filters).
    Bulk { index: String },
}

/// What `export` wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Exported {
    pub path: String,
    pub conversations: u64,
    pub turns: u64,
    /// The store's commit the file shows.
    pub commit: i64,
}

/// What can go wrong exporting.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error("no store at `{0}`: nothing to export (pass --data-dir DIR for another store)")]
    NoStore(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
    #[error(
        "a record of `{id}` in the store `{path}` is damaged ({reason}); nothing was written for it and the export stopped: run `store status`, or forget `{id}` and export again"
    )]
    Damaged {
        path: PathBuf,
        id: String,
        reason: String,
    },
}

/// The document id of a line in the bulk form.
fn doc_id(line: &Line) -> String {
    match line {
        Line::Conversation(c) => format!("conversation/{}", c.id),
        Line::Turn(t) => format!("turn/{}/{}", t.conversation, t.number),
    }
}

/// Writes the conversations `selectors` all pick (every one without selectors) and their
/// turns to `out`, each conversation's line before its turns', in id order.
pub(crate) fn export(
    dir: &Path,
    selectors: &[Selector],
    form: &Form,
    out: &mut dyn Write,
) -> Result<Exported, ExportError> {
    let path = dir.join(DB_NAME);
    if !path.exists() {
        return Err(ExportError::NoStore(path));
    }
    let conn = schema::open_reader(&path)?;
    let mut done = Exported {
        path: path.display().to_string(),
        ..Exported::default()
    };
    let tx = conn
        .unchecked_transaction()
        .map_err(StoreError::sql(&path))?;
    done.commit = read::last_commit(&tx, &path)?.0;
    let mut heads = read::heads_since(&tx, &path, 0)?;
    heads.sort_by(|a, b| a.id.cmp(&b.id));
    let damaged = |id: &str, reason: String| ExportError::Damaged {
        path: path.clone(),
        id: id.to_owned(),
        reason,
    };
    for head in heads {
        let mut conv = match read::conversation(&tx, &path, &head.id) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(StoreError::Record { source, .. }) => {
                return Err(damaged(&head.id, source.to_string()));
            }
            Err(e) => return Err(e.into()),
        };
        if !selectors.iter().all(|s| admin::selects(s, &conv)) {
            continue;
        }
        // the store holds redacted text; this build's rules apply too
        crate::transcript::redacted::meta(&mut conv.meta);
        let context = serde_json::json!({
            "source": conv.file.format,
            "group": conv.file.group,
            "cwd": conv.meta.cwd,
        });
        write_line(
            out,
            form,
            Line::Conversation(Box::new(ConvLine::of(&conv))),
            None,
        )?;
        done.conversations += 1;
        for record in read::turns(&tx, &path, &conv.id, 0, conv.turn_count)? {
            let mut turn = record
                .turn()
                .map_err(|e| damaged(&conv.id, format!("turn {}: {e}", record.number)))?;
            crate::transcript::redacted::turn(&mut turn);
            let line = Line::Turn(Box::new(TurnLine::of(&conv.id, &turn)));
            write_line(out, form, line, Some(&context))?;
            done.turns += 1;
        }
    }
    tx.commit().map_err(StoreError::sql(&path))?;
    out.flush()?;
    Ok(done)
}

/// One record (after its action line in the bulk form, with `context` merged into a turn's).
fn write_line(
    out: &mut dyn Write,
    form: &Form,
    line: Line,
    context: Option<&serde_json::Value>,
) -> Result<(), ExportError> {
    let to_io = |e: serde_json::Error| ExportError::Write(e.into());
    match form {
        Form::Lines => serde_json::to_writer(&mut *out, &Versioned::new(line)).map_err(to_io)?,
        Form::Bulk { index } => {
            let action = serde_json::json!({"index": {"_index": index, "_id": doc_id(&line)}});
            serde_json::to_writer(&mut *out, &action).map_err(to_io)?;
            out.write_all(b"\n")?;
            let mut doc = serde_json::to_value(Versioned::new(line)).map_err(to_io)?;
            if let (Some(doc), Some(serde_json::Value::Object(extra))) =
                (doc.as_object_mut(), context)
            {
                for (k, v) in extra {
                    if !v.is_null() {
                        doc.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            serde_json::to_writer(&mut *out, &doc).map_err(to_io)?;
        }
    }
    out.write_all(b"\n")?;
    Ok(())
}
