//! `Contract::evaluate_batch`, the API's many-requests entry: its results
//! are `evaluate`'s, in order, and a request validated for another
//! contract stops it with that error. (The runtime alone interprets; the
//! CLI's and conformance's tests run native code.)

use std::sync::Arc;

use runtime::{Contract, Engine, EvaluateError};

const TRANSFER: &str = include_str!("../../examples/contracts/acme.payments.transfer.yaml");
const REQUESTS: &str = include_str!("../../examples/requests/acme.payments.transfer.ndjson");

fn load(text: &str) -> Arc<Contract> {
    let bundle = frontend::compile(text).expect("the contract compiles");
    Engine::builder().build().load(bundle).expect("loads")
}

#[test]
fn a_batch_gives_each_request_the_result_evaluate_gives_it_in_order() {
    let contract = load(TRANSFER);
    let requests: Vec<_> = REQUESTS.lines().map(|line| contract.request(line).expect("valid")).collect();
    assert!(requests.len() > 3, "the example has several requests");
    let mut results = Vec::new();
    contract.evaluate_batch(&requests, &mut results).expect("evaluates");
    let batch: Vec<Vec<u8>> = results.iter().map(|r| r.to_json()).collect();
    let one_by_one: Vec<Vec<u8>> =
        requests.iter().map(|r| contract.evaluate(r).expect("evaluates").to_json()).collect();
    assert_eq!(batch, one_by_one);
}

#[test]
fn a_request_for_another_contract_stops_the_batch_with_that_error() {
    let contract = load(TRANSFER);
    let other = load(TRANSFER);
    let line = REQUESTS.lines().next().expect("a request");
    let requests = vec![contract.request(line).expect("valid"), other.request(line).expect("valid")];
    let mut results = Vec::new();
    let error = contract.evaluate_batch(&requests, &mut results).expect_err("the second is not for it");
    assert_eq!(error, EvaluateError::WrongContract { expected: contract.name().to_string() });
    assert_eq!(results.len(), 1, "the first request's result is kept");
}
