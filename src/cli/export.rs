//! `export` and `import`: the durable store's history as NDJSON, to move it to another machine
//! or into OpenSearch / Elasticsearch, and merged back into a store.
use super::settings::store_dir;
use super::{GlobalArgs, output, store};
use crate::server::ToolError;
use crate::store::export::{self, Form};
use crate::store::import;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The form `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ExportFormat {
    /// One record per line.
    #[default]
    Jsonl,
    /// A `_bulk` request body: an `index` action line before each record.
    OpensearchBulk,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The form of the lines.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
    /// The index the bulk form's action lines name.
    #[arg(long, value_name = "NAME", default_value = "conversation-search")]
    pub index: String,
    /// Write to FILE (complete or not at all) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    // only the conversations these pick (all of them must; none: every one)
    #[command(flatten)]
    pub select: store::SelectorArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// An `export` file (either form), or `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// `FILE.partial`, renamed to FILE once complete.
fn partial(file: &Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// `export`.
pub(crate) fn export(global: &GlobalArgs, args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let selectors = args.select.selectors(global)?;
    let form = match args.format {
        ExportFormat::Jsonl => Form::Lines,
        ExportFormat::OpensearchBulk => Form::Bulk {
            index: args.index.clone(),
        },
    };
    let dir = match store_dir(global) {
        Ok(d) => d,
        Err(e) => return Ok(output::print_result::<()>(Err(e))),
    };
    let err = |e: export::ExportError| ToolError::new(e.to_string());
    let Some(file) = &args.out else {
        let mut out = output::data_out();
        return Ok(
            match export::export(&dir, &selectors, &form, &mut out).map_err(err) {
                Ok(done) => {
                    eprintln!(
                        "exported {} conversations and {} turns (store commit {})",
                        done.conversations, done.turns, done.commit
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {}", e.0);
                    ExitCode::FAILURE
                }
            },
        );
    };
    let tmp = partial(file);
    let result = (|| {
        let f = std::fs::File::create(&tmp)
            .map_err(|e| ToolError::new(format!("cannot create `{}`: {e}", tmp.display())))?;
        let mut out = std::io::BufWriter::new(f);
        let mut done = export::export(&dir, &selectors, &form, &mut out).map_err(err)?;
        let f = out
            .into_inner()
            .map_err(|e| ToolError::new(format!("cannot write `{}`: {e}", tmp.display())))?;
        f.sync_all()
            .and_then(|()| std::fs::rename(&tmp, file))
            .map_err(|e| ToolError::new(format!("cannot write `{}`: {e}", file.display())))?;
        done.path = file.display().to_string();
        Ok(done)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(output::print_result(result))
}

/// `import FILE`.
pub(crate) fn import(global: &GlobalArgs, args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let name = args.file.display().to_string();
    let result = store_dir(global).and_then(|dir| {
        let mut file = if name == "-" {
            spool_stdin()?
        } else {
            std::fs::File::open(&args.file)
                .map_err(|e| ToolError::new(format!("cannot read `{name}`: {e}")))?
        };
        import::import(&dir, &mut file, &name).map_err(|e| ToolError::new(e.to_string()))
    });
    if let Err(e) = &result {
        eprintln!("error: {}", e.0);
    }
    let _ = std::io::stderr().flush();
    Ok(output::print_result(result))
}

/// Standard input copied into a temporary file that no path names (import reads its input
/// twice: once to check every line, once to merge).
fn spool_stdin() -> Result<std::fs::File, ToolError> {
    let dir = std::env::temp_dir();
    let path = dir.join(format!(
        "conversation-search-import-{}-{}",
        std::process::id(),
        crate::util::time::now_ms()
    ));
    let err = |e: std::io::Error| {
        ToolError::new(format!(
            "cannot keep standard input in `{}` to import it: {e}; pass the file's path instead of `-`, or set TMPDIR to a writable directory",
            dir.display()
        ))
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(err)?;
    let _ = std::fs::remove_file(&path);
    std::io::copy(&mut std::io::stdin().lock(), &mut file).map_err(err)?;
    Ok(file)
}
