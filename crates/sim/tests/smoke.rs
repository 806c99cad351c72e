mod common;
use common::*;

#[test]
fn single_flow_runs() {
    let r = aqmlab_sim::run(single_flow(142, 200 * S, 50 * S), |_| true).unwrap();
    for (k, v) in &r.summary {
        println!("{k}: {v:?}");
    }
    let q = series(&r, "queue_packets", "bottleneck");
    let cw = series(&r, "cwnd", "0");
    for i in (0..q.len()).step_by(100) {
        println!("{:8.2} q={:5} cwnd={:7.1}", q[i].0, q[i].1, cw[i].1);
    }
}
