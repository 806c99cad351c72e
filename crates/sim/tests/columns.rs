//! The column-wise scenario: `Scenario::check` names the column and the
//! element of every mistake, and the JSON form round-trips.

mod common;
use aqmlab_sim::Scenario;
use common::*;

fn dumbbell() -> Scenario {
    Dumbbell {
        bottleneck_bps: 10_000_000,
        bottleneck_delay: 10 * MS,
        buffer: 50,
        access_bps: 100_000_000,
        access_delays: (0..4).map(|i| MS + i * MS).collect(),
        receiver_delay: MS,
        starts: vec![0, 10 * MS, 20 * MS, 30 * MS],
        duration: 2 * S,
        warmup: S,
        sample: 100 * MS,
        seed: 1,
        profile: reno(),
    }
    .build()
}

/// A change to the scenario that `check` must refuse.
type Breakage = Box<dyn FnOnce(&mut Scenario)>;

/// The field of the error `check` gives once `breakage` is applied.
fn refused(breakage: impl FnOnce(&mut Scenario)) -> String {
    let mut s = dumbbell();
    breakage(&mut s);
    let e = s.check().expect_err("the change must be refused");
    format!("{}: {}", e.field, e.message)
}

#[test]
fn check_names_the_column_and_the_element() {
    dumbbell().check().unwrap();
    let cases: Vec<(Breakage, &str)> = vec![
        (
            Box::new(|s| {
                s.links.rate_bps.pop();
            }),
            "links.rate_bps: has 17 values but links.from has 18",
        ),
        (
            Box::new(|s| s.links.from[3] = 99),
            "links.from[3]: no such node",
        ),
        (
            Box::new(|s| s.links.rate_bps[5] = 0),
            "links.rate_bps[5]: must be positive",
        ),
        (
            Box::new(|s| s.links.qdisc[4] = 2),
            "links.qdisc[4]: no such discipline (2 are listed)",
        ),
        (
            Box::new(|s| s.nodes[1].numbers = Some([0, 3])),
            // The names say how many nodes there are.
            "links.from[14]: no such node",
        ),
        (
            Box::new(|s| s.links.names[1].names[0] = "access_s".into()),
            "links.names[1].names[0]: a numbered name needs {} for its number",
        ),
        (
            Box::new(|s| {
                s.flows.start_ns.push(0);
            }),
            "flows.start_ns: has 5 values but flows.group has 4",
        ),
        (
            Box::new(|s| s.flows.group[2] = 5),
            "flows.group[2]: no such group (2 are listed)",
        ),
        (
            Box::new(|s| s.flows.path.offsets[2] = 1),
            "flows.path.offsets[2]: must not be less than the one before",
        ),
        (
            Box::new(|s| {
                s.flows.reverse_path.offsets.pop();
            }),
            "flows.reverse_path.offsets: has 4 values but there are 4 flows (needs one more)",
        ),
        (
            Box::new(|s| s.flows.path.links[4] = 999),
            "flows.path[1]: no link 999",
        ),
        (
            Box::new(|s| s.flows.path.links.swap(0, 2)),
            "flows.path[0]: link access_d0 does not start where the previous one ends",
        ),
    ];
    for (breakage, expected) in cases {
        assert_eq!(refused(breakage), expected);
    }
}

#[test]
fn the_json_form_round_trips_and_runs_the_same() {
    let s = dumbbell();
    let text = serde_json::to_string(&s).unwrap();
    let again: Scenario = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), text);
    let a = aqmlab_sim::run(s, |_| true).unwrap();
    let b = aqmlab_sim::run_json(&text, |_| true).unwrap();
    // Printed: NaN (an idle link's delay) equals itself there.
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
}
