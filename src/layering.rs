//! The layering test: reads `src/**/*.rs` and fails when a module imports from a layer above
//! its own, when sibling modules import each other in a cycle, or when code outside
//! `src/transcript/` names a transcript format.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom up: a module may use its own layer and the ones before it.
const LAYERS: &[&str] = &[
    "util",
    "redact",
    "transcript",
    "index",
    "cache",
    "store",
    "corpus",
    "live",
    "server",
    "cli",
];

/// One source file: its module path (`["index", "segment"]`) and its code without tests.
struct Source {
    module: Vec<String>,
    code: String,
}

fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap_or(&p).with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            Source {
                module,
                code: without_tests(&text),
            }
        })
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code before the first `#[cfg(test)]` (test modules sit at the end of files) and
/// without comments, so that prose and test helpers do not count as imports.
fn without_tests(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The names a path continues with: `x` for `x::…`, and each member's first name for a group
/// `{x::…, y}` (nested groups are not expanded further).
fn next_names(rest: &str) -> Vec<String> {
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut end = group.len();
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        return group[..end]
            .split(',')
            .filter_map(|m| {
                let name: String = m.trim().chars().take_while(|c| is_ident(*c)).collect();
                (!name.is_empty() && name != "self").then_some(name)
            })
            .collect();
    }
    let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
    if name.is_empty() {
        Vec::new()
    } else {
        vec![name]
    }
}

/// Every `crate::a::b` path in `code`, as its first two segments (`b` when there is one).
fn crate_paths(code: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| is_ident(c) || c == '$')
        {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        for first in next_names(rest) {
            let after = &rest[first.len()..];
            let subs = after
                .strip_prefix("::")
                .filter(|_| rest.starts_with(first.as_str()))
                .map(next_names)
                .unwrap_or_default();
            if subs.is_empty() {
                out.push((first.clone(), None));
            }
            for sub in subs {
                out.push((first.clone(), Some(sub)));
            }
        }
    }
    out
}

/// `super::x` paths of a file, as the sibling modules (or parent items) `x` they name;
/// `super::super::…` reaches past the siblings and is left out.
fn super_paths(code: &str) -> Vec<String> {
    code.match_indices("super::")
        .filter(|(i, _)| !code[..*i].ends_with("super::"))
        .flat_map(|(i, _)| next_names(&code[i + "super::".len()..]))
        .filter(|n| n != "super")
        .collect()
}

fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    let files = sources();
    assert!(files.len() > 20, "found only {} source files", files.len());
    for f in &files {
        let Some(own) = f.module.first().and_then(|m| layer(m)) else {
            continue;
        };
        for (target, _) in crate_paths(&f.code) {
            if layer(&target).is_some_and(|t| t > own) {
                wrong.push(format!("{} uses crate::{target}", f.module.join("::")));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports from a higher layer:\n{}",
        wrong.join("\n")
    );
}

/// The sibling modules each module's files use, keyed by parent module.
fn sibling_edges(files: &[Source]) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in files {
        if f.module.len() < 2 {
            continue;
        }
        let parent = f.module[..f.module.len() - 1].to_vec();
        let me = f.module[f.module.len() - 1].clone();
        let mut used: BTreeSet<String> = super_paths(&f.code).into_iter().collect();
        if parent.len() == 1 {
            for (top, sub) in crate_paths(&f.code) {
                if top == parent[0] {
                    used.extend(sub);
                }
            }
        }
        used.remove(&me);
        graphs
            .entry(parent)
            .or_default()
            .entry(me)
            .or_default()
            .extend(used);
    }
    graphs
}

#[test]
fn no_import_cycle_between_sibling_modules() {
    let files = sources();
    let mut cycles = Vec::new();
    for (parent, graph) in sibling_edges(&files) {
        for (a, uses) in &graph {
            for b in uses {
                if a < b && graph.get(b).is_some_and(|u| u.contains(a)) {
                    cycles.push(format!("{0}::{a} <-> {0}::{b}", parent.join("::")));
                }
            }
        }
        // longer cycles: a depth-first search for a back edge
        let mut state: BTreeMap<&str, u8> = BTreeMap::new();
        for start in graph.keys() {
            if let Some(c) = find_cycle(&graph, start, &mut state, &mut Vec::new()) {
                cycles.push(format!("{}: {}", parent.join("::"), c.join(" -> ")));
                break; // the search state is left mid-path: one cycle per parent is enough
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

fn find_cycle<'a>(
    graph: &'a BTreeMap<String, BTreeSet<String>>,
    node: &'a str,
    state: &mut BTreeMap<&'a str, u8>,
    path: &mut Vec<&'a str>,
) -> Option<Vec<String>> {
    match state.get(node) {
        Some(1) => {
            let from = path.iter().position(|n| *n == node).unwrap_or(0);
            let mut c: Vec<String> = path[from..].iter().map(|s| (*s).to_owned()).collect();
            c.push(node.to_owned());
            return Some(c);
        }
        Some(_) => return None,
        None => {}
    }
    state.insert(node, 1);
    path.push(node);
    for next in graph.get(node).into_iter().flatten() {
        if graph.contains_key(next.as_str()) {
            if let Some(c) = find_cycle(graph, next, state, path) {
                return Some(c);
            }
        }
    }
    path.pop();
    state.insert(node, 2);
    None
}

#[test]
fn no_format_is_named_outside_the_transcript_layer() {
    let files = sources();
    let names: Vec<&str> = crate::transcript::ADAPTERS
        .iter()
        .map(|a| a.name())
        .collect();
    let modules: BTreeSet<String> = files
        .iter()
        .filter(|f| f.module.len() >= 2 && f.module[0] == "transcript")
        .map(|f| f.module[1].clone())
        .collect();
    let mut wrong = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.module.first().is_some_and(|m| m != "transcript"))
    {
        for (top, sub) in crate_paths(&f.code) {
            if top == "transcript"
                && sub.as_deref().is_some_and(|s| {
                    names.contains(&s)
                        || (modules.contains(s) && crate::transcript::adapter(s).is_some())
                })
            {
                wrong.push(format!(
                    "{} uses crate::transcript::{}",
                    f.module.join("::"),
                    sub.unwrap_or_default()
                ));
            }
        }
        for name in &names {
            if f.code.contains(&format!("\"{name}\"")) {
                wrong.push(format!(
                    "{} names the format \"{name}\"",
                    f.module.join("::")
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "format names outside src/transcript:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checks_see_what_they_check() {
    let paths = crate_paths("use crate::index::segment::Segment; x = crate::util::glob::Glob;");
    assert_eq!(
        paths,
        vec![
            ("index".to_owned(), Some("segment".to_owned())),
            ("util".to_owned(), Some("glob".to_owned()))
        ]
    );
    assert_eq!(
        super_paths("use super::{a, b::C}; super::super::x::c; super::d::e"),
        vec!["a", "b", "d"]
    );
    assert_eq!(
        crate_paths("use crate::index::{segment::S, view};"),
        vec![
            ("index".to_owned(), Some("segment".to_owned())),
            ("index".to_owned(), Some("view".to_owned()))
        ]
    );
    assert_eq!(
        without_tests("a // crate::x\n#[cfg(test)]\nmod t { crate::y }"),
        "a "
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["c".to_owned()]));
    g.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(find_cycle(&g, "a", &mut BTreeMap::new(), &mut Vec::new()).is_some());
}

#[test]
fn every_integration_test_is_in_the_one_test_binary() {
    // `autotests = false`: a `tests/*.rs` file outside `tests/all/` would never be built or run
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut stray: Vec<String> = std::fs::read_dir(&tests)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "all")
        .collect();
    stray.sort();
    assert!(
        stray.is_empty(),
        "move these into tests/all/ and add a `mod` line to tests/all/main.rs: {stray:?}"
    );
    let main = std::fs::read_to_string(tests.join("all/main.rs")).unwrap_or_default();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(tests.join("all"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(m) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            if !main.contains(&format!("mod {m};")) {
                missing.push(m.to_owned());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests/all/main.rs does not declare: {missing:?}"
    );
}
