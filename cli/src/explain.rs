//! `rulec eval --explain`: why each request got its decision, for people.

use std::fmt::Write as _;

use runtime::ContractSet;
use runtime::result::RuleTrace;

use crate::inputs::{Lines, is_blank};
use crate::{Failure, Outcome};

pub fn run(set: &ContractSet, lines: Lines) -> Outcome {
    let mut all_valid = true;
    let mut number = 0;
    for line in lines {
        let line = line.map_err(|e| Failure::Usage(format!("cannot read requests: {e}")))?;
        if is_blank(&line) {
            continue;
        }
        number += 1;
        let (contract, request) = match set.request(&line) {
            Ok(found) => found,
            Err(refused) => {
                all_valid = false;
                println!("request {number}: invalid\n  {refused}\n");
                continue;
            }
        };
        let (result, traces) = match contract.explain(&request) {
            Ok(explained) => explained,
            Err(e) => {
                all_valid = false;
                println!("request {number}: not evaluated\n  {e}\n");
                continue;
            }
        };
        let mut text =
            format!("request {number}: {} {} -> {}\n", contract.name(), contract.version(), result.summary());
        for trace in &traces {
            describe(contract.ir(), trace, &mut text);
        }
        let _ = writeln!(text, "  result: {}\n", String::from_utf8_lossy(&result.to_json()));
        print!("{text}");
    }
    if all_valid { Ok(()) } else { Err(Failure::Reported) }
}

fn describe(contract: &ir::Contract, trace: &RuleTrace, out: &mut String) {
    let rule = &contract.rules[trace.rule.index()];
    let status = match (&trace.fired, trace.applied) {
        (_, false) if trace.fired.is_none() => "did not apply".to_string(),
        (None, true) => "applied, not evaluated (an earlier rule decided)".to_string(),
        (Some(Ok(true)), applied) => format!("{}FIRED", if applied { "applied, " } else { "referenced, " }),
        (Some(Ok(false)), applied) => {
            format!("{}did not fire", if applied { "applied, " } else { "referenced, " })
        }
        (Some(Err(e)), _) => format!("error: {e}"),
        (None, false) => "did not apply".to_string(),
    };
    let _ = writeln!(out, "  rule {}: {status}", rule.name);
    for (i, (text, value)) in trace.conditions.iter().enumerate() {
        let label = if i == 0 { "when" } else { "  part" };
        let _ = writeln!(out, "    {label} {text} = {value}");
    }
    for (name, value) in &trace.lets {
        let _ = writeln!(out, "    let {name} = {value}");
    }
    for (text, value) in &trace.signals {
        let _ = writeln!(out, "    signal {text} = {value}");
    }
}
