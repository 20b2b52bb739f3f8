//! The function-length test: a function of `src/` longer than [`LIMIT`] lines (its signature
//! line to its closing brace, test code left out) says why in its doc comment, with the words
//! "Longer than 80 lines:" and the reason after them. The test finds the words; whether the
//! reason is true is for a reader to judge.
use crate::layering::{src_dir, walk, without_tests};

/// Lines a function may take without saying why.
const LIMIT: usize = 80;

/// The words that start the reason.
const MARKER: &str = "Longer than 80 lines:";

/// One function: its name, the line its `fn` is on (1-based) and how many lines it takes.
#[derive(Debug, PartialEq, Eq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// The functions with a body in `code` (a file's code without comments, test items and
/// string contents, line breaks kept).
fn functions(code: &str) -> Vec<Function> {
    let c: Vec<char> = code.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < c.len() {
        let is_fn = c[i] == 'f'
            && c[i + 1] == 'n'
            && c[i + 2].is_whitespace()
            && (i == 0 || !ident(c[i - 1]));
        if !is_fn {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < c.len() && c[j].is_whitespace() {
            j += 1;
        }
        let name: String = c[j..].iter().take_while(|&&ch| ident(ch)).collect();
        if let Some(end) = body_end(&c, j) {
            let line = c[..i].iter().filter(|&&ch| ch == '\n').count() + 1;
            let lines = c[i..end].iter().filter(|&&ch| ch == '\n').count() + 1;
            out.push(Function { name, line, lines });
        }
        // nested functions are functions too: read on inside the body
        i = j;
    }
    out
}

/// The index of the closing brace of the body of the function whose signature starts at `i`,
/// or `None` when it has none (a declaration ending in `;`).
fn body_end(c: &[char], mut i: usize) -> Option<usize> {
    // the signature: up to the first `{` or `;` outside parentheses and brackets
    let mut depth = 0usize;
    while i < c.len() {
        match c[i] {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => return None,
            '{' if depth == 0 => break,
            _ => {}
        }
        i += 1;
    }
    let mut braces = 0usize;
    while i < c.len() {
        match c[i] {
            '{' => braces += 1,
            '}' => {
                braces -= 1;
                if braces == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The doc comment and attributes right above line `line` (1-based) of `file`, joined.
fn doc_above(file: &str, line: usize) -> String {
    let lines: Vec<&str> = file.lines().collect();
    let mut doc = Vec::new();
    for l in lines[..line.saturating_sub(1).min(lines.len())]
        .iter()
        .rev()
    {
        let t = l.trim();
        if t.starts_with("//") || t.starts_with("#[") {
            doc.push(t.trim_start_matches('/').trim());
        } else {
            break;
        }
    }
    doc.reverse();
    doc.join(" ")
}

/// `(file, function, lines)` of each function of `file` over the limit without a reason.
fn unexplained(rel: &str, file: &str) -> Vec<(String, String, usize)> {
    let (_, code) = without_tests(file);
    functions(&code)
        .into_iter()
        .filter(|f| f.lines > LIMIT && !doc_above(file, f.line).contains(MARKER))
        .map(|f| (rel.to_owned(), f.name, f.lines))
        .collect()
}

#[test]
fn every_long_function_says_why_it_is_long() {
    let src = src_dir();
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    assert!(files.len() > 20, "found only {} source files", files.len());
    let mut long = Vec::new();
    for p in &files {
        // a test module's file holds tests only
        if p.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let rel = p.strip_prefix(&src).unwrap_or(p);
        let rel = rel
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/");
        let file = std::fs::read_to_string(p).unwrap_or_default();
        long.extend(unexplained(&rel, &file));
    }
    let wrong: Vec<String> = long
        .iter()
        .map(|(f, n, l)| format!("src/{f}: `{n}` is {l} lines"))
        .collect();
    assert!(
        wrong.is_empty(),
        "functions over {LIMIT} lines whose doc comment does not say why (\"{MARKER} …\"): \
         split them by concept, or give the reason:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_long_function_is_found_and_its_reason_read() {
    let body = "    x();\n".repeat(LIMIT);
    let long = format!("/// Does x.\nfn long() {{\n{body}}}\n");
    let explained = format!("/// Does x. {MARKER} one loop.\nfn long() {{\n{body}}}\n");
    let nested = format!(
        "#[cfg(test)]\nfn hidden() {{\n{body}}}\nimpl A {{\n    pub(crate) fn outer(&self) -> [u8; 2] {{\n        fn inner() {{\n{body}        }}\n    }}\n}}\n"
    );
    let short = "fn short() {\n    let s = \"{\";\n}\ntrait T {\n    fn f(&self);\n}\n";
    assert_eq!(
        unexplained("a.rs", &long),
        [("a.rs".into(), "long".into(), LIMIT + 2)]
    );
    assert!(unexplained("a.rs", &explained).is_empty());
    let found: Vec<String> = unexplained("a.rs", &nested)
        .into_iter()
        .map(|(_, n, _)| n)
        .collect();
    assert_eq!(found, ["outer", "inner"], "test items are left out");
    assert!(unexplained("a.rs", short).is_empty());
    let (_, code) = without_tests(short);
    assert_eq!(
        functions(&code),
        [Function {
            name: "short".into(),
            line: 1,
            lines: 3
        }]
    );
}
