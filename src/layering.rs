//! The layering test: reads all non-test code of `src/**/*.rs` and fails when a module imports
//! from a layer above its own, when sibling modules at any depth import each other in a cycle,
//! when code outside `src/transcript/` names a transcript format, or when the modules that allow
//! unsafe code are not the ones `Cargo.toml` and the crate docs list.
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

/// One source file: its module path (`["index", "segment"]`) and its code without comments
/// and test items, once with string literals (`text`) and once with their contents blanked
/// (`code`), so that a path written in a message does not count as an import.
struct Source {
    module: Vec<String>,
    text: String,
    code: String,
}

impl Source {
    fn new(module: &[&str], file: &str) -> Source {
        let (text, code) = without_tests(file);
        Source {
            module: module.iter().map(|m| (*m).to_owned()).collect(),
            text,
            code,
        }
    }
}

pub(crate) fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources() -> Vec<Source> {
    let src = src_dir();
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
            let file = std::fs::read_to_string(&p).unwrap_or_default();
            let m: Vec<&str> = module.iter().map(String::as_str).collect();
            Source::new(&m, &file)
        })
        .collect()
}

pub(crate) fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// The characters of a file with comments turned into spaces (line breaks kept), and for each
/// whether it is inside a string or character literal: one loop with a branch per kind of
/// token (line and nested block comments, raw strings, strings and character literals versus
/// lifetimes), which share the cursor and both outputs.
fn lex(file: &str) -> (Vec<char>, Vec<bool>) {
    let s: Vec<char> = file.chars().collect();
    let mut out = Vec::with_capacity(s.len());
    let mut quoted = Vec::with_capacity(s.len());
    let mut push = |out: &mut Vec<char>, c: char, q: bool| {
        out.push(c);
        quoted.push(q);
    };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        let ident_before = i > 0 && is_ident(s[i - 1]);
        if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                push(&mut out, ' ', false);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    push(&mut out, ' ', false);
                    push(&mut out, ' ', false);
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    push(&mut out, ' ', false);
                    push(&mut out, ' ', false);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    push(&mut out, if s[i] == '\n' { '\n' } else { ' ' }, false);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_at(&s, i).filter(|_| !ident_before) {
            // r"…", r#"…"#, br"…": up to a quote followed by as many hashes
            while s[i] != '"' {
                push(&mut out, s[i], false);
                i += 1;
            }
            push(&mut out, '"', false);
            i += 1;
            while i < s.len() {
                if s[i] == '"' && (1..=hashes).all(|k| s.get(i + k) == Some(&'#')) {
                    push(&mut out, '"', false);
                    i += 1;
                    break;
                }
                push(&mut out, s[i], true);
                i += 1;
            }
        } else if c == '"' || (c == '\'' && (next == Some('\\') || s.get(i + 2) == Some(&'\''))) {
            // a string, or a character literal (a lifetime has no closing quote)
            push(&mut out, c, false);
            i += 1;
            while i < s.len() && s[i] != c {
                if s[i] == '\\' && i + 1 < s.len() {
                    push(&mut out, s[i], true);
                    i += 1;
                }
                push(&mut out, s[i], true);
                i += 1;
            }
            if i < s.len() {
                push(&mut out, c, false);
                i += 1;
            }
        } else {
            push(&mut out, c, false);
            i += 1;
        }
    }
    (out, quoted)
}

/// The number of hashes of a raw string literal starting at `i` (`r"`, `r#"`, `br##"`).
fn raw_string_at(s: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if s.get(j) == Some(&'b') || s.get(j) == Some(&'c') {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while s.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (s.get(j) == Some(&'"')).then_some(hashes)
}

/// The end of the attribute `#[…]` or `#![…]` starting at `i`, and its contents without spaces.
fn attribute_at(code: &[char], i: usize) -> Option<(usize, String)> {
    if code.get(i) != Some(&'#') {
        return None;
    }
    let mut j = i + 1;
    if code.get(j) == Some(&'!') {
        j += 1;
    }
    if code.get(j) != Some(&'[') {
        return None;
    }
    let start = j + 1;
    let mut depth = 0usize;
    while j < code.len() {
        match code[j] {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    let inner: String = code[start..j]
                        .iter()
                        .filter(|c| !c.is_whitespace())
                        .collect();
                    return Some((j + 1, inner));
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// The end of the item (or statement) starting at `i`: after its `;` or its closing `}` at the
/// outermost level, or before a closing bracket that belongs to what encloses it.
fn item_end(code: &[char], mut i: usize) -> usize {
    // further attributes of the same item
    loop {
        while code.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        match attribute_at(code, i) {
            Some((end, _)) => i = end,
            None => break,
        }
    }
    let mut depth = 0usize;
    while i < code.len() {
        match code[i] {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return i,
            '}' if depth == 1 => return i + 1,
            ')' | ']' | '}' => depth -= 1,
            ';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// A file's code without comments and without the items marked `#[cfg(test)]` (test modules,
/// test-only functions and statements; all of the file after an inner `#![cfg(test)]`): the
/// code after a test item is read on. Returned with string literals (for format names) and with
/// their contents blanked (for paths).
pub(crate) fn without_tests(file: &str) -> (String, String) {
    let (chars, quoted) = lex(file);
    let blank: Vec<char> = chars
        .iter()
        .zip(&quoted)
        .map(|(c, q)| if *q && *c != '\n' { ' ' } else { *c })
        .collect();
    let mut keep = vec![true; chars.len()];
    let mut i = 0;
    while i < blank.len() {
        if blank[i] == '#' {
            if let Some((end, inner)) = attribute_at(&blank, i) {
                if inner == "cfg(test)" {
                    let inner_attr = blank.get(i + 1) == Some(&'!');
                    let to = if inner_attr {
                        blank.len()
                    } else {
                        item_end(&blank, end)
                    };
                    keep[i..to].iter_mut().for_each(|k| *k = false);
                    i = to;
                    continue;
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    let pick = |v: &[char]| -> String {
        v.iter()
            .zip(&keep)
            .map(|(c, k)| if *k || *c == '\n' { *c } else { ' ' })
            .collect()
    };
    (pick(&chars), pick(&blank))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a path continues with from `rest`: `a::b` for `a::b…`, and each member of a group
/// `{a::b, c::{d, e}, self}` expanded (`self` is the path itself, an empty continuation).
fn continuations(rest: &str) -> Vec<Vec<String>> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut end = group.len();
        let mut members = Vec::new();
        let mut from = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    members.push(&group[from..i]);
                    from = i + 1;
                }
                _ => {}
            }
        }
        members.push(&group[from..end]);
        return members
            .into_iter()
            .flat_map(|m| {
                let m = m.trim();
                if m.is_empty() {
                    Vec::new()
                } else if m == "self" || m.starts_with("self ") {
                    vec![Vec::new()]
                } else {
                    continuations(m)
                }
            })
            .collect();
    }
    let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
    if name.is_empty() {
        return vec![Vec::new()];
    }
    let after = rest[name.len()..].trim_start();
    match after.strip_prefix("::") {
        Some(more) => continuations(more)
            .into_iter()
            .map(|mut tail| {
                tail.insert(0, name.clone());
                tail
            })
            .collect(),
        None => vec![vec![name]],
    }
}

/// Every path from the crate root in `code` of the file of `module`: `crate::…` paths, and
/// `super::…` and `self::…` paths resolved from the file's module.
fn crate_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let Some(c) = rest.chars().next() else { break };
        let boundary = code[..i]
            .chars()
            .next_back()
            .is_none_or(|p| !(is_ident(p) || p == '$' || p == ':'));
        if !boundary || !(c == 'c' || c == 's') {
            i += c.len_utf8();
            continue;
        }
        let (base, len): (Vec<String>, usize) = if rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if rest.starts_with("self::") {
            (module.to_vec(), "self::".len())
        } else if rest.starts_with("super::") {
            let mut up = 0;
            let mut len = 0;
            while rest[len..].starts_with("super::") {
                up += 1;
                len += "super::".len();
            }
            (module[..module.len().saturating_sub(up)].to_vec(), len)
        } else {
            i += c.len_utf8();
            continue;
        };
        for tail in continuations(&rest[len..]) {
            let mut p = base.clone();
            p.extend(tail);
            if !p.is_empty() {
                out.push(p);
            }
        }
        i += len;
    }
    out
}

fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// The imports of a module from a layer above its own.
fn upward_imports(files: &[Source]) -> Vec<String> {
    let mut wrong = Vec::new();
    for f in files {
        let Some(own) = f.module.first().and_then(|m| layer(m)) else {
            continue;
        };
        for path in crate_paths(&f.module, &f.code) {
            if layer(&path[0]).is_some_and(|t| t > own) {
                wrong.push(format!("{} uses crate::{}", f.module.join("::"), path[0]));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let files = sources();
    assert!(files.len() > 20, "found only {} source files", files.len());
    let wrong = upward_imports(&files);
    assert!(
        wrong.is_empty(),
        "imports from a higher layer:\n{}",
        wrong.join("\n")
    );
}

/// For each module, which of its child modules use which others: a file of `a::b::c` (or
/// deeper) that uses `a::d::…` makes the edge `b -> d` under `a`.
fn sibling_edges(files: &[Source]) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in files {
        for depth in 0..f.module.len() {
            graphs
                .entry(f.module[..depth].to_vec())
                .or_default()
                .entry(f.module[depth].clone())
                .or_default();
        }
        for path in crate_paths(&f.module, &f.code) {
            let common = f
                .module
                .iter()
                .zip(&path)
                .take_while(|(a, b)| a == b)
                .count();
            if common < f.module.len() && common < path.len() {
                graphs
                    .entry(f.module[..common].to_vec())
                    .or_default()
                    .entry(f.module[common].clone())
                    .or_default()
                    .insert(path[common].clone());
            }
        }
    }
    graphs
}

/// The import cycles between sibling modules, one per parent module at most.
fn sibling_cycles(files: &[Source]) -> Vec<String> {
    let mut cycles = Vec::new();
    for (parent, graph) in sibling_edges(files) {
        let mut state: BTreeMap<&str, u8> = BTreeMap::new();
        for start in graph.keys() {
            if let Some(c) = find_cycle(&graph, start, &mut state, &mut Vec::new()) {
                let at = if parent.is_empty() {
                    "crate".to_owned()
                } else {
                    parent.join("::")
                };
                cycles.push(format!("{at}: {}", c.join(" -> ")));
                break; // the search state is left mid-path: one cycle per parent is enough
            }
        }
    }
    cycles
}

#[test]
fn no_import_cycle_between_sibling_modules() {
    let cycles = sibling_cycles(&sources());
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
        for path in crate_paths(&f.module, &f.code) {
            let sub = path.get(1).map(String::as_str);
            if path[0] == "transcript"
                && sub.is_some_and(|s| {
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
            if f.text.contains(&format!("\"{name}\"")) {
                wrong.push(format!(
                    "{} names the format \"{name}\"",
                    f.module.join("::")
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "format names outside src/transcript:\n{}",
        wrong.join("\n")
    );
}

/// The modules whose code allows `unsafe_code`.
fn unsafe_modules(files: &[Source]) -> BTreeSet<String> {
    files
        .iter()
        .filter(|f| {
            f.code.contains("#![allow(unsafe_code)]") || f.code.contains("#[allow(unsafe_code)]")
        })
        .map(|f| f.module.join("::"))
        .collect()
}

/// The `a::b` names in backticks in `text`.
fn module_names(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|n| n.contains("::") && n.chars().all(|c| is_ident(c) || c == ':'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_modules_that_allow_unsafe_code_are_the_ones_listed() {
    let actual = unsafe_modules(&sources());
    assert!(
        !actual.is_empty(),
        "no module allows unsafe code: is the check reading the files?"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    // the comment above `unsafe_code = "deny"` in `[lints.rust]`
    let lints = manifest.split("[lints.rust]").nth(1).unwrap_or_default();
    let listed = lints.split("unsafe_code").next().unwrap_or_default();
    assert_eq!(
        module_names(listed),
        actual,
        "Cargo.toml's list of unsafe modules"
    );
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap_or_default();
    let docs = lib.split("//! # Unsafe code").nth(1).unwrap_or_default();
    let docs = docs.split("//! #").next().unwrap_or_default();
    let docs: String = docs
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        module_names(&docs),
        actual,
        "src/lib.rs's list of unsafe modules"
    );
}

fn planted(files: &[(&[&str], &str)]) -> Vec<Source> {
    files.iter().map(|(m, code)| Source::new(m, code)).collect()
}

#[test]
fn the_checks_see_what_they_check() {
    let here = ["index".to_owned(), "x".to_owned()];
    let paths = crate_paths(
        &here,
        "use crate::index::segment::Segment; x = crate::util::glob::Glob;",
    );
    assert_eq!(
        paths,
        vec![
            vec!["index", "segment", "Segment"],
            vec!["util", "glob", "Glob"]
        ]
    );
    assert_eq!(
        crate_paths(
            &here,
            "use super::{a, b::C}; super::super::x::c; self::d::e"
        ),
        vec![
            vec!["index", "a"],
            vec!["index", "b", "C"],
            vec!["x", "c"],
            vec!["index", "x", "d", "e"]
        ]
    );
    assert_eq!(
        crate_paths(&here, "use crate::{index::{segment::S, view}, util};"),
        vec![
            vec!["index", "segment", "S"],
            vec!["index", "view"],
            vec!["util"]
        ]
    );
    // strings and comments are not code; `$crate` is a macro's
    let (_, code) = without_tests("let s = \"crate::cli\"; // crate::cli\n$crate::cli::x");
    assert!(crate_paths(&here, &code).is_empty(), "{code}");
    let (text, code) = without_tests("a // crate::x\n#[cfg(test)]\nmod t { \"}\" }\nb \"s\" '}'");
    assert_eq!(
        text.split_whitespace().collect::<Vec<_>>(),
        ["a", "b", "\"s\"", "'}'"]
    );
    assert_eq!(
        code.split_whitespace().collect::<Vec<_>>(),
        ["a", "b", "\"", "\"", "'", "'"]
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["c".to_owned()]));
    g.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(find_cycle(&g, "a", &mut BTreeMap::new(), &mut Vec::new()).is_some());
}

#[test]
fn an_upward_import_after_a_test_item_is_found() {
    let files = planted(&[(
        &["index", "x"],
        "use crate::util::a;\n#[cfg(test)]\nfn only_in_tests() { let s = \"}\"; }\n\
         #[cfg(test)]\nmod tests;\n/* } */ fn later() { crate::cli::run(); }\n\
         #[cfg(test)]\nmod tests { use crate::server::y; }",
    )]);
    assert_eq!(upward_imports(&files), ["index::x uses crate::cli"]);
    let inner = planted(&[(&["index", "x"], "#![cfg(test)]\nuse crate::cli::a;")]);
    assert!(upward_imports(&inner).is_empty());
}

#[test]
fn a_cycle_two_levels_down_is_found() {
    // a file deep inside `a::b::c` uses `a::b::e`, which uses `c` back
    let files = planted(&[
        (&["a", "b", "c", "d"], "use crate::a::b::e::Thing;"),
        (&["a", "b", "e"], "fn f() { super::c::d::g(); }"),
        (&["a", "b", "f"], "use super::e::Thing;"),
    ]);
    assert_eq!(sibling_cycles(&files), ["a::b: c -> e -> c"]);
    let acyclic = planted(&[
        (&["a", "b", "c", "d"], "use crate::a::b::e::Thing;"),
        (&["a", "b", "e"], "use super::f::Other;"),
    ]);
    assert!(sibling_cycles(&acyclic).is_empty());
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
