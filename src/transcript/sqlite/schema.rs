//! The schema: `sqlite_schema` (page 1) rows and the column list of each `CREATE TABLE`
//! statement (quoted identifiers, table constraints, `INTEGER PRIMARY KEY` rowid aliases,
//! virtual generated columns, `WITHOUT ROWID`), so that columns can be found by name.

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    /// Declared type as written (`INTEGER`, `varchar(20)`, empty when none).
    pub decl_type: String,
    /// False for virtual generated columns, which records do not store.
    pub stored: bool,
}

/// A table b-tree and how its records map to columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    pub name: String,
    pub root: u32,
    pub columns: Vec<Column>,
    /// The `INTEGER PRIMARY KEY` column, stored as NULL in records and read as the rowid.
    pub rowid_alias: Option<usize>,
    pub without_rowid: bool,
}

impl Table {
    /// The schema table itself (`sqlite_schema`, root page 1).
    pub(crate) fn schema_table() -> Table {
        let col = |n: &str, t: &str| Column {
            name: n.to_owned(),
            decl_type: t.to_owned(),
            stored: true,
        };
        Table {
            name: "sqlite_schema".to_owned(),
            root: 1,
            columns: vec![
                col("type", "text"),
                col("name", "text"),
                col("tbl_name", "text"),
                col("rootpage", "int"),
                col("sql", "text"),
            ],
            rowid_alias: None,
            without_rowid: false,
        }
    }

    /// Index of the column named `name` (ASCII case-insensitive, as in SQL).
    pub(crate) fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Position in the record of the value of column `column` (virtual columns have none).
    pub(crate) fn record_index(&self, column: usize) -> Option<usize> {
        let c = self.columns.get(column)?;
        c.stored
            .then(|| self.columns[..column].iter().filter(|c| c.stored).count())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// An identifier or keyword; `quoted` when written as "x", `x`, [x].
    Word {
        text: String,
        quoted: bool,
    },
    /// A string or number literal, or other token we only skip.
    Lit,
    Punct(char),
}

fn tokenize(sql: &str) -> Vec<Tok> {
    let s: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let quoted_until = |i: &mut usize, close: char, doubled: bool| -> String {
        let mut text = String::new();
        *i += 1;
        while *i < s.len() {
            if s[*i] == close {
                if doubled && s.get(*i + 1) == Some(&close) {
                    text.push(close);
                    *i += 2;
                    continue;
                }
                *i += 1;
                break;
            }
            text.push(s[*i]);
            *i += 1;
        }
        text
    };
    while i < s.len() {
        let c = s[i];
        match c {
            _ if c.is_whitespace() => i += 1,
            '-' if s.get(i + 1) == Some(&'-') => {
                while i < s.len() && s[i] != '\n' {
                    i += 1;
                }
            }
            '/' if s.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < s.len() && !(s[i] == '*' && s.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
            }
            '"' | '`' => {
                let text = quoted_until(&mut i, c, true);
                out.push(Tok::Word { text, quoted: true });
            }
            '[' => {
                let text = quoted_until(&mut i, ']', false);
                out.push(Tok::Word { text, quoted: true });
            }
            '\'' => {
                quoted_until(&mut i, '\'', true);
                out.push(Tok::Lit);
            }
            _ if c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii() => {
                let start = i;
                while i < s.len()
                    && (s[i].is_alphanumeric() || s[i] == '_' || s[i] == '$' || !s[i].is_ascii())
                {
                    i += 1;
                }
                let text: String = s[start..i].iter().collect();
                if c.is_ascii_digit() {
                    out.push(Tok::Lit);
                } else {
                    out.push(Tok::Word {
                        text,
                        quoted: false,
                    });
                }
            }
            _ => {
                out.push(Tok::Punct(c));
                i += 1;
            }
        }
    }
    out
}

/// Whether `t` is the bare keyword `kw`.
fn kw(t: Option<&Tok>, kw: &str) -> bool {
    matches!(t, Some(Tok::Word { text, quoted: false }) if text.eq_ignore_ascii_case(kw))
}

/// Splits the body of a parenthesised list at top-level commas. Returns the elements and the
/// index just after the closing parenthesis.
fn split_list(toks: &[Tok], open: usize) -> Option<(Vec<&[Tok]>, usize)> {
    let mut depth = 0usize;
    let mut start = open + 1;
    let mut parts = Vec::new();
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    parts.push(&toks[start..i]);
                    return Some((parts, i + 1));
                }
            }
            Tok::Punct(',') if depth == 1 => {
                parts.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

const TABLE_CONSTRAINTS: &[&str] = &["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"];
const COLUMN_CONSTRAINTS: &[&str] = &[
    "CONSTRAINT",
    "PRIMARY",
    "NOT",
    "NULL",
    "UNIQUE",
    "CHECK",
    "DEFAULT",
    "COLLATE",
    "REFERENCES",
    "GENERATED",
    "AS",
];

fn word(t: &Tok) -> Option<&str> {
    match t {
        Tok::Word { text, .. } => Some(text),
        _ => None,
    }
}

/// Columns of a `CREATE TABLE` statement, its rowid alias and whether it is `WITHOUT ROWID`.
/// `None` when the statement has no column list (`CREATE TABLE … AS SELECT`) or is malformed.
pub(super) fn parse_create_table(sql: &str) -> Option<(Vec<Column>, Option<usize>, bool)> {
    let toks = tokenize(sql);
    let open = toks.iter().position(|t| *t == Tok::Punct('('))?;
    if !kw(toks.first(), "CREATE") || !toks[..open].iter().any(|t| kw(Some(t), "TABLE")) {
        return None;
    }
    let (elements, after) = split_list(&toks, open)?;
    let mut columns: Vec<Column> = Vec::new();
    let mut alias: Option<usize> = None;
    let mut table_pk: Option<Vec<String>> = None;
    for el in elements {
        let Some(first) = el.first() else { continue };
        if TABLE_CONSTRAINTS.iter().any(|k| kw(Some(first), k)) {
            if let Some(pk) = table_primary_key(el) {
                table_pk = Some(pk);
            }
            continue;
        }
        let (column, integer_key) = column_def(el)?;
        if integer_key {
            alias = Some(columns.len());
        }
        columns.push(column);
    }
    if let Some([only]) = table_pk.as_deref() {
        if let Some(i) = columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(only))
        {
            if columns[i].decl_type.eq_ignore_ascii_case("INTEGER") {
                alias = Some(i);
            }
        }
    }
    let without_rowid = toks[after..]
        .windows(2)
        .any(|w| kw(Some(&w[0]), "WITHOUT") && kw(Some(&w[1]), "ROWID"));
    if without_rowid {
        alias = None;
    }
    (!columns.is_empty()).then_some((columns, alias, without_rowid))
}

/// The columns of a table constraint `[CONSTRAINT name] PRIMARY KEY (cols…)`; `None` for any
/// other constraint.
fn table_primary_key(el: &[Tok]) -> Option<Vec<String>> {
    let p = el.iter().position(|t| kw(Some(t), "PRIMARY"))?;
    let o = el[p..].iter().position(|t| *t == Tok::Punct('('))?;
    let (cols, _) = split_list(el, p + o)?;
    Some(
        cols.iter()
            .filter_map(|c| c.first().and_then(word).map(str::to_owned))
            .collect(),
    )
}

/// One column definition: the column, and whether it is an `INTEGER PRIMARY KEY` (ascending),
/// which makes it the rowid's alias. `None` when it does not start with a name.
fn column_def(el: &[Tok]) -> Option<(Column, bool)> {
    let name = word(el.first()?)?.to_owned();
    // the declared type: the words up to the first constraint
    let mut type_words: Vec<String> = Vec::new();
    let mut i = 1;
    let mut depth = 0usize;
    while i < el.len() {
        let t = &el[i];
        if depth == 0 && COLUMN_CONSTRAINTS.iter().any(|k| kw(Some(t), k)) {
            break;
        }
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth = depth.saturating_sub(1),
            _ => {}
        }
        if let Some(w) = word(t) {
            type_words.push(w.to_owned());
        }
        i += 1;
    }
    let rest = &el[i..];
    let mut pk_desc = None;
    let mut generated = false;
    let mut stored_generated = false;
    let mut depth = 0usize;
    for (j, t) in rest.iter().enumerate() {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            _ if kw(Some(t), "PRIMARY") && kw(rest.get(j + 1), "KEY") => {
                pk_desc = Some(kw(rest.get(j + 2), "DESC"));
            }
            _ if kw(Some(t), "AS") => generated = true,
            _ if kw(Some(t), "STORED") => stored_generated = true,
            _ => {}
        }
    }
    let decl_type = type_words.join(" ");
    let integer_key = pk_desc == Some(false) && decl_type.eq_ignore_ascii_case("INTEGER");
    let column = Column {
        name,
        decl_type,
        stored: !generated || stored_generated,
    };
    Some((column, integer_key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> (Vec<String>, Option<usize>, bool) {
        let (cols, alias, wr) = parse_create_table(sql).expect("parses");
        (cols.into_iter().map(|c| c.name).collect(), alias, wr)
    }

    #[test]
    fn drizzle_style_table() {
        let sql = "CREATE TABLE `part` (\n\t`id` text PRIMARY KEY,\n\t`message_id` text NOT NULL,\n\t`data` text NOT NULL,\n\tCONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE\n)";
        assert_eq!(
            names(sql),
            (
                vec!["id".into(), "message_id".into(), "data".into()],
                None,
                false
            )
        );
    }

    #[test]
    fn rowid_aliases() {
        assert_eq!(names("CREATE TABLE t(a INTEGER PRIMARY KEY, b)").1, Some(0));
        assert_eq!(
            names("create table t(a integer primary key asc, b)").1,
            Some(0)
        );
        assert_eq!(
            names("CREATE TABLE t(a INTEGER PRIMARY KEY DESC, b)").1,
            None
        );
        assert_eq!(names("CREATE TABLE t(a INT PRIMARY KEY, b)").1, None);
        assert_eq!(
            names("CREATE TABLE t(b, a INTEGER, PRIMARY KEY(a))").1,
            Some(1)
        );
        assert_eq!(
            names("CREATE TABLE t(a INTEGER, b, PRIMARY KEY(a, b))").1,
            None
        );
        let (_, alias, wr) = names("CREATE TABLE t(a INTEGER PRIMARY KEY, b) WITHOUT ROWID");
        assert_eq!((alias, wr), (None, true));
    }

    #[test]
    fn quoting_comments_and_types() {
        let sql = "CREATE TABLE IF NOT EXISTS \"we\"\"ird\" ( -- comment, with comma\n [first col] VARCHAR(10, 2) DEFAULT 'a,b' , \"x\"\"y\" /* c, d */ NUMERIC, `z`)";
        let (cols, _, _) = parse_create_table(sql).expect("parses");
        let got: Vec<(&str, &str)> = cols
            .iter()
            .map(|c| (c.name.as_str(), c.decl_type.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![("first col", "VARCHAR"), ("x\"y", "NUMERIC"), ("z", "")]
        );
    }

    #[test]
    fn generated_columns() {
        let (cols, _, _) = parse_create_table(
            "CREATE TABLE t(a, b, c AS (a + b), d INT GENERATED ALWAYS AS (a * 2) STORED, e)",
        )
        .expect("parses");
        let stored: Vec<bool> = cols.iter().map(|c| c.stored).collect();
        assert_eq!(stored, vec![true, true, false, true, true]);
        let t = Table {
            name: "t".into(),
            root: 2,
            columns: cols,
            rowid_alias: None,
            without_rowid: false,
        };
        assert_eq!(t.record_index(2), None);
        assert_eq!(t.record_index(3), Some(2));
        assert_eq!(t.record_index(4), Some(3));
        assert_eq!(t.column("E"), Some(4));
    }

    #[test]
    fn rejects_non_tables() {
        assert!(parse_create_table("CREATE TABLE t AS SELECT 1").is_none());
        assert!(parse_create_table("CREATE INDEX i ON t(a)").is_none());
    }
}
