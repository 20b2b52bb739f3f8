//! Query parsing: turns what the agent typed into a [`Plan`] of scored terms.
use super::scoring::{Plan, PlanTerm};
use super::tokenizer::Tokenizer;

/// Parses plain keywords: every term of the query is scored, any may match.
pub fn parse(query: &str) -> Plan {
    let mut plan = Plan::default();
    let mut tok = Tokenizer::new();
    tok.for_each_term(query, |t| {
        if let Some(existing) = plan.terms.iter_mut().find(|p| p.text == t) {
            existing.weight += 1.0;
        } else {
            let group = plan.terms.len().min(63) as u16;
            plan.terms.push(PlanTerm {
                text: t.to_owned(),
                group,
                weight: 1.0,
            });
        }
    });
    plan
}
