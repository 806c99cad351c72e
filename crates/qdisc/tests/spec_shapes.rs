//! Every scenario's discipline reads and writes the JSON it did before the
//! parameters moved into each discipline's file: `data/spec_shapes.json`
//! holds, for each kind, inputs (defaults, and some parameters set) with the
//! JSON the previous `QdiscSpec` (one enum of struct variants, defaults in
//! serde functions) wrote back for them, defaults included.

use aqmlab_qdisc::{QdiscSpec, KINDS};
use serde_json::Value;

#[test]
fn every_spec_keeps_its_json() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("data/spec_shapes.json")).expect("the recorded shapes");
    let mut kinds = std::collections::BTreeSet::new();
    for case in &cases {
        let spec: QdiscSpec = serde_json::from_value(case["input"].clone())
            .unwrap_or_else(|e| panic!("{}: {e}", case["input"]));
        assert_eq!(
            serde_json::to_value(&spec).unwrap(),
            case["output"],
            "{}",
            case["input"]
        );
        kinds.insert(spec.kind());
    }
    assert_eq!(kinds.len(), KINDS.len(), "every kind is recorded");
}
