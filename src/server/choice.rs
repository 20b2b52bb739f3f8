//! Tool arguments that take one of a closed set of words (`role`, `sort`, `scope`): one table
//! per type ([`Choice::WORDS`]) gives both the `enum` of the argument's JSON schema and the
//! check of a value, so the schema and the check cannot differ. A value is read trimmed and
//! case-blind; an empty one means what it always meant ([`Choice::EMPTY`]); a wrong one is
//! refused naming the argument and its words (the whole error answer: see
//! [`super::toolset::invoke`]). A `source` argument ([`SourceName`]) lists the
//! registered formats the same way, and a result's file operation is the transcript's own
//! [`FileOp`] with its words as the schema's `enum`.
use crate::corpus::project::Scope;
use crate::corpus::query::{MatchRole, SortOrder};
use crate::transcript::FileOp;
use rmcp::schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;

/// A closed set of words an argument takes.
pub(crate) trait Choice: Sized + Copy + PartialEq + 'static {
    /// The argument's name, for messages.
    const FIELD: &'static str;
    /// Each word and its value, in the order the schema lists them.
    const WORDS: &'static [(&'static str, Self)];
    /// What an empty string means: no value, or the argument's default.
    const EMPTY: Option<Self>;
}

impl Choice for MatchRole {
    const FIELD: &'static str = "role";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("user", MatchRole::User),
        ("assistant", MatchRole::Assistant),
    ];
    /// No filter.
    const EMPTY: Option<Self> = None;
}

impl Choice for SortOrder {
    const FIELD: &'static str = "sort";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("relevance", SortOrder::Relevance),
        ("recent", SortOrder::Recent),
    ];
    const EMPTY: Option<Self> = Some(SortOrder::Relevance);
}

impl Choice for Scope {
    const FIELD: &'static str = "scope";
    const WORDS: &'static [(&'static str, Self)] =
        &[("project", Scope::Project), ("all", Scope::All)];
    /// Every project, whatever the tool's default (as the argument was always read).
    const EMPTY: Option<Self> = Some(Scope::All);
}

/// The words of `T` for a message: `` `a` or `b` ``, `` `a`, `b` or `c` ``.
fn listed<T: Choice>() -> String {
    let words: Vec<String> = T::WORDS.iter().map(|(w, _)| format!("`{w}`")).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.join(""),
    }
}

/// Reads a value of `T`: trimmed, case-blind; empty is [`Choice::EMPTY`].
pub(crate) fn read<T: Choice>(value: &str) -> Result<Option<T>, String> {
    let v = value.trim().to_lowercase();
    if v.is_empty() {
        return Ok(T::EMPTY);
    }
    match T::WORDS.iter().find(|(w, _)| *w == v) {
        Some((_, t)) => Ok(Some(*t)),
        None => Err(format!(
            "`{}` must be {} (got `{v}`).",
            T::FIELD,
            listed::<T>()
        )),
    }
}

/// `#[serde(deserialize_with = "choice::optional")]` for an `Option<T>` argument: absent or
/// null is `None`, a string is [`read`].
pub(crate) fn optional<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Choice,
{
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(s) => read(&s).map_err(serde::de::Error::custom),
    }
}

/// The schema of `T`: a string, one of its words.
fn schema<T: Choice>() -> Schema {
    string_enum(T::WORDS.iter().map(|(w, _)| (*w).into()).collect())
}

/// The schema of a string that is one of `words`.
fn string_enum(words: Vec<serde_json::Value>) -> Schema {
    let mut obj = serde_json::Map::new();
    obj.insert("type".into(), "string".into());
    obj.insert("enum".into(), words.into());
    Schema::from(obj)
}

macro_rules! choice_schema {
    ($($t:ty),*) => {$(
        impl JsonSchema for $t {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                <$t as Choice>::FIELD.into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                schema::<$t>()
            }
        }
    )*};
}

choice_schema!(MatchRole, SortOrder, Scope);

/// How a tool call touched a file, in results: `read`, `edit` or `write` (its serde form).
impl JsonSchema for FileOp {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "operation".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let words: Vec<serde_json::Value> = [FileOp::Read, FileOp::Edit, FileOp::Write]
            .iter()
            .map(|op| op.as_str().into())
            .collect();
        string_enum(words)
    }
}

/// A `source` argument: a transcript format's name. Its schema's `enum` is the registered
/// formats; [`crate::server::tools::check_source`] checks it against the same registry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub(crate) struct SourceName(pub String);

impl JsonSchema for SourceName {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "source".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_enum(
            crate::transcript::ADAPTERS
                .iter()
                .map(|a| a.name().into())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[derive(Debug, Deserialize, JsonSchema)]
    #[schemars(crate = "rmcp::schemars")]
    struct Args {
        #[serde(default, deserialize_with = "optional")]
        role: Option<MatchRole>,
        #[serde(default, deserialize_with = "optional")]
        sort: Option<SortOrder>,
        #[serde(default, deserialize_with = "optional")]
        scope: Option<Scope>,
    }

    fn args(v: Value) -> Result<Args, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn words_are_read_trimmed_and_case_blind() {
        let a = args(json!({"role": "User", "sort": " recent ", "scope": "PROJECT"})).unwrap();
        assert_eq!(a.role, Some(MatchRole::User));
        assert_eq!(a.sort, Some(SortOrder::Recent));
        assert_eq!(a.scope, Some(Scope::Project));
        let a = args(json!({"role": null})).unwrap();
        assert_eq!((a.role, a.sort, a.scope), (None, None, None));
    }

    #[test]
    fn an_empty_word_means_what_it_always_meant() {
        let a = args(json!({"role": "", "sort": "", "scope": " "})).unwrap();
        assert_eq!(a.role, None, "no role filter");
        assert_eq!(a.sort, Some(SortOrder::Relevance));
        assert_eq!(a.scope, Some(Scope::All));
    }

    #[test]
    fn a_wrong_word_names_the_argument_and_its_words() {
        assert_eq!(
            args(json!({"role": "Both"})).unwrap_err(),
            "`role` must be `user` or `assistant` (got `both`)."
        );
        assert_eq!(
            args(json!({"sort": "newest"})).unwrap_err(),
            "`sort` must be `relevance` or `recent` (got `newest`)."
        );
        assert_eq!(
            args(json!({"scope": "mine"})).unwrap_err(),
            "`scope` must be `project` or `all` (got `mine`)."
        );
    }

    #[test]
    fn a_wrong_word_is_the_whole_error_answer() {
        let call = |v: Value| {
            let args = v.as_object().cloned().unwrap_or_default();
            crate::server::toolset::invoke(None, args, |_: Args| Ok(())).map_err(|e| e.0)
        };
        assert_eq!(
            call(json!({"scope": "Mine"})).unwrap_err(),
            "`scope` must be `project` or `all` (got `mine`)."
        );
        let other = call(json!({"sort": 5})).unwrap_err();
        assert!(other.starts_with("Invalid arguments: "), "{other}");
        assert!(call(json!({"sort": "recent"})).is_ok());
    }

    #[test]
    fn the_schema_lists_the_words_the_check_takes() {
        let schema = crate::server::input_schema::<Args>();
        let portable = crate::server::schema::portable(&schema, true);
        let props = &portable["properties"];
        assert_eq!(
            props["role"],
            json!({"type": "string", "enum": ["user", "assistant"]})
        );
        assert_eq!(props["sort"]["enum"], json!(["relevance", "recent"]));
        assert_eq!(props["scope"]["enum"], json!(["project", "all"]));
        assert!(portable.get("required").is_none(), "{portable:?}");
        for (word, _) in MatchRole::WORDS {
            assert!(read::<MatchRole>(word).unwrap().is_some());
        }
    }
}
