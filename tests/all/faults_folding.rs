//! Faults, point 10: tokens fold accents and width in documents and queries (`naïve` ~
//! `naive`, `ｆｏｏ` ~ `foo`), precomposed or decomposed.

use crate::common::serve_prompts;

#[test]
fn fault_accents_and_full_width_letters_fold_both_ways() {
    let s = serve_prompts(
        "-home-u-work-fold",
        &[
            "a naïve quokkaword approach",
            "plain naive capybaraword idea",
            "ｆｕｌｌｗｉｄｔｈ ocelotword",
            "Café crème tapirword",
            "decomposed cafe\u{301} wombatword",
        ],
    );
    let total = |q: &str| s.search(q)["total"].as_u64().unwrap_or(0);
    assert_eq!(total("naive"), 2);
    assert_eq!(total("naïve"), 2);
    assert_eq!(total("fullwidth"), 1);
    assert_eq!(total("ＦＵＬＬＷＩＤＴＨ"), 1);
    assert_eq!(total("cafe"), 2);
    assert_eq!(total("café"), 2);
    assert_eq!(total("creme"), 1);
}
