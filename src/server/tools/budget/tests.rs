//! Unit tests of the output budgets: windows keep each field's head and tail, paging reads
//! every character once, and escapes and multi-byte text stay within the budget.
use super::*;

fn json_chars(fields: &[String]) -> usize {
    fields.iter().map(|f| json_len(f) - 2).sum()
}

#[test]
fn small_text_is_untouched() {
    let w = window(&["ab", "cd"], None, 10);
    assert_eq!(w.fields, ["ab", "cd"]);
    assert!(!w.truncated);
}

#[test]
fn each_long_field_keeps_its_own_head_and_tail() {
    let user = format!("{}{}", "u".repeat(900), "U".repeat(30));
    let asst = format!("{}{}{}", "A".repeat(30), "a".repeat(900), "Z".repeat(30));
    let w = window(&[&user, &asst], None, 600);
    assert!(w.truncated);
    assert!(json_chars(&w.fields) <= 600, "{}", json_chars(&w.fields));
    assert!(w.fields[0].starts_with("uuuu") && w.fields[0].ends_with(&"U".repeat(30)));
    assert!(w.fields[1].starts_with(&"A".repeat(30)), "{}", w.fields[1]);
    assert!(w.fields[1].ends_with(&"Z".repeat(30)));
    let n = w.next_offset.unwrap();
    assert!(w.fields[0].starts_with(&user[..n]));
    assert!(w.fields[0].contains(&format!("char_offset={n}")));
    assert!(w.fields[1].contains("chars cut; read on with char_offset="));
    let next = window(&[&user, &asst], Some(n), 300);
    assert_eq!(next.fields[0], user[n..n + 300]);
    assert_eq!(next.next_offset, Some(n + 300));
}

#[test]
fn a_short_field_is_kept_whole_and_the_long_one_gets_the_rest() {
    let user = "short prompt";
    let asst = "r".repeat(5000);
    let w = window(&[user, &asst], None, 1000);
    assert_eq!(w.fields[0], user);
    assert!(json_chars(&w.fields) <= 1000);
    assert_eq!(
        w.next_offset,
        Some(user.len() + w.fields[1].find('\n').unwrap())
    );
}

#[test]
fn escapes_and_multibyte_text_stay_within_budget_and_page_losslessly() {
    let text: String = (0..3000)
        .map(|i| ['"', 'é', '\n', '日', 'x', '\u{1}'][i % 6])
        .collect();
    for budget in [6, 7, 50, 800] {
        let w = window(&[&text], None, budget.max(60));
        assert!(json_chars(&w.fields) <= budget.max(60), "{budget}");
        let mut at = w.next_offset.unwrap();
        let mut seen: String = text.chars().take(at).collect();
        assert!(w.fields[0].starts_with(&seen));
        loop {
            let w = window(&[&text], Some(at), budget);
            assert!(json_chars(&w.fields) <= budget, "{budget}");
            seen.push_str(&w.fields[0]);
            match w.next_offset {
                Some(n) => {
                    assert!(n > at);
                    at = n
                }
                None => break,
            }
        }
        assert_eq!(seen, text);
    }
}

#[test]
fn pages_cross_field_boundaries() {
    let w = window(&["abc", "def"], Some(2), 3);
    assert_eq!(w.fields, ["c", "de"]);
    assert_eq!(w.next_offset, Some(5));
    let w = window(&["abc", "def"], Some(3), 10);
    assert_eq!(w.fields, ["", "def"]);
    assert_eq!(w.next_offset, None);
}

#[test]
fn rows_fit_with_their_envelope() {
    let rows = ["aaaa", "bbbb", "cccc"];
    // each row is 6 characters of JSON; the envelope grows by one per row shown
    assert_eq!(fitting(&rows, 30, |n| 10 + n), 2);
    assert_eq!(fitting(&rows, 16, |n| 10 + n), 0);
    assert_eq!(thousands(1234567), "1,234,567");
    assert_eq!(clip_json("a\"bcdef", 5), "a\"b…");
}
