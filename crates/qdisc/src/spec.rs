//! Disciplines by name, as scenario files give them: `{"kind": "red", ...}`.
//!
//! [`QdiscSpec`] is a tagged enum over the disciplines' parameter sets. Each
//! set lives in its discipline's own file, declared once with its defaults,
//! units and checks ([`crate::params`]), and implements [`QdiscParams`]; this
//! file lists the kinds and dispatches to them.
//!
//! The values are plain integers (packets, bytes, nanoseconds, bits per
//! second) and fractions: the Python face converts the user's units ("5ms")
//! with the units of the [`catalogue`] before they reach this enum.

use serde::{Deserialize, Serialize};

use crate::ared::AredParams;
use crate::blue::BlueParams;
use crate::cbt::CbtParams;
use crate::chips::ChipsParams;
use crate::choke::ChokeParams;
use crate::codel::CodelParams;
use crate::dcbt::DcbtParams;
use crate::droptail::DropTailParams;
use crate::drr::DrrParams;
use crate::dsdrr::DsdrrParams;
use crate::dtdrr::DtdrrParams;
use crate::fq_codel::FqCodelParams;
use crate::fred::FredParams;
use crate::mqfq::MqfqParams;
use crate::params::{readable, split_path, Param, Params, SpecError};
use crate::pie::PieParams;
use crate::qsdrr::QsdrrParams;
use crate::red::RedParams;
use crate::red_linux::LinuxRedParams;
use crate::scfq::ScfqParams;
use crate::sfb::SfbParams;
use crate::sfed::SfedParams;
use crate::sfq::SfqParams;
use crate::tdrr::TdrrParams;
use crate::wdrr::WdrrParams;
use crate::wf2q_plus::Wf2qPlusParams;
use crate::{Packet, QueueDiscipline};

/// What every discipline's parameter set does besides being read.
pub trait QdiscParams {
    /// What the discipline is, in one line.
    const SUMMARY: &'static str;

    /// Refuse impossible parameters, naming the field.
    fn validate(&self) -> Result<(), SpecError>;

    /// Take the rate of the link the queue feeds, where the discipline needs
    /// it and the user left it out.
    fn fill_link_rate(&mut self, _bps: u64) {}

    /// Make the discipline. `seed` feeds its random stream and hash family,
    /// so two queues of one run never share random numbers. The parameters
    /// must have passed [`QdiscParams::validate`].
    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send>;
}

/// One discipline in the catalogue.
#[derive(Clone, Debug, Serialize)]
pub struct KindEntry {
    pub kind: &'static str,
    pub summary: &'static str,
    pub parameters: Vec<Param>,
}

macro_rules! kinds {
    ($( $kind:literal => $variant:ident($params:ty), )*) => {
        /// A discipline and its parameters.
        #[derive(Clone, Debug, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum QdiscSpec {
            $( #[serde(rename = $kind)] $variant($params), )*
        }

        /// Every discipline's `kind` as scenario files spell it.
        pub const KINDS: [&str; [$($kind),*].len()] = [$($kind),*];

        impl QdiscSpec {
            /// The discipline's `kind` as scenario files spell it.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $kind, )*
                }
            }

            /// Refuse impossible parameters, naming the field.
            pub fn validate(&self) -> Result<(), SpecError> {
                match self {
                    $( Self::$variant(p) => p.validate(), )*
                }
            }

            /// Give disciplines that need the link rate the simulator's
            /// value, where the user did not set one.
            pub fn fill_link_rate(&mut self, bps: u64) {
                match self {
                    $( Self::$variant(p) => p.fill_link_rate(bps), )*
                }
            }

            /// Make the discipline (see [`QdiscParams::build`]).
            pub fn build<P: Packet + Send + 'static>(
                &self,
                seed: u64,
            ) -> Box<dyn QueueDiscipline<P> + Send> {
                match self {
                    $( Self::$variant(p) => p.build(seed), )*
                }
            }
        }

        /// Every discipline: its kind, summary and parameters with their
        /// units and defaults (what the Python face reads).
        pub fn catalogue() -> Vec<KindEntry> {
            vec![$(
                KindEntry {
                    kind: $kind,
                    summary: <$params as QdiscParams>::SUMMARY,
                    parameters: <$params as Params>::parameters(),
                },
            )*]
        }
    };
}

impl QdiscSpec {
    /// Read a spec from its JSON; a mistake names its field, in
    /// words a user reads.
    pub fn from_json(text: &str) -> Result<Self, SpecError> {
        serde_json::from_str(text).map_err(|e| {
            let text = e.to_string();
            let text = text.split(" at line ").next().unwrap_or(&text);
            match split_path(text) {
                ("", "missing field `kind`") => {
                    SpecError::new("kind", format!("required (one of {})", KINDS.join(", ")))
                }
                ("", message) if message.starts_with("unknown variant") => {
                    SpecError::new("kind", readable(message))
                }
                (path, message) => SpecError::new(path, readable(message)),
            }
        })
    }
}

kinds! {
    "droptail" => Droptail(DropTailParams),
    "red" => Red(RedParams),
    "ared" => Ared(AredParams),
    "red_linux" => RedLinux(LinuxRedParams),
    "fred" => Fred(FredParams),
    "choke" => Choke(ChokeParams),
    "blue" => Blue(BlueParams),
    "sfb" => Sfb(SfbParams),
    "sfq" => Sfq(SfqParams),
    "mqfq" => Mqfq(MqfqParams),
    "sfed" => Sfed(SfedParams),
    "pie" => Pie(PieParams),
    "codel" => Codel(CodelParams),
    "fq_codel" => FqCodel(FqCodelParams),
    "cbt" => Cbt(CbtParams),
    "dcbt" => Dcbt(DcbtParams),
    "chips" => Chips(ChipsParams),
    "drr" => Drr(DrrParams),
    "wdrr" => Wdrr(WdrrParams),
    "tdrr" => Tdrr(TdrrParams),
    "qsdrr" => Qsdrr(QsdrrParams),
    "dtdrr" => Dtdrr(DtdrrParams),
    "dsdrr" => Dsdrr(DsdrrParams),
    "scfq" => Scfq(ScfqParams),
    "wf2q_plus" => Wf2qPlus(Wf2qPlusParams),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::{BloomParams, Mapping};
    use crate::drr::DropEnd;
    use crate::dsdrr::OverW;
    use crate::params::Unit;
    use crate::tdrr::RateEstimator;
    use crate::testkit::TestPacket;
    use crate::{Limit, MqfqReorder};

    fn spec(json: &str) -> QdiscSpec {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    /// The path and the message of the error reading `json`.
    fn refusal(json: &str) -> (String, String) {
        let e = QdiscSpec::from_json(json).expect_err(json);
        (e.field, e.message)
    }

    fn field(json: &str) -> String {
        spec(json).validate().expect_err(json).field
    }

    /// Every kind with its defaults, and 30 packets where it must be given a
    /// buffer.
    fn every_kind() -> Vec<QdiscSpec> {
        KINDS
            .iter()
            .map(|kind| {
                let required = catalogue()
                    .into_iter()
                    .find(|k| k.kind == *kind)
                    .expect("every kind is in the catalogue")
                    .parameters
                    .iter()
                    .any(|p| p.required);
                if required {
                    spec(&format!(
                        r#"{{"kind": "{kind}", "limit": {{"packets": 30}}}}"#
                    ))
                } else {
                    spec(&format!(r#"{{"kind": "{kind}"}}"#))
                }
            })
            .collect()
    }

    /// A discipline that says it drops nothing on dequeue (so a simulator
    /// may run its departures late) drops nothing there, even overloaded:
    /// a burst of 20 flows far beyond its buffer, then drained slowly.
    #[test]
    fn no_drop_on_dequeue_unless_said() {
        for s in every_kind() {
            let kind = s.kind();
            let mut q = s.build::<TestPacket>(1);
            let mut verdicts = crate::Verdicts::new();
            let mut dropped_on_dequeue = 0;
            let mut now = 0;
            for round in 0..50u64 {
                for flow in 0..20 {
                    now += 1_000;
                    q.enqueue(TestPacket::new(flow, round, 1000), now, &mut verdicts);
                    verdicts.drain(|_| {});
                }
                // Far slower than the arrivals: the queue stays long, and
                // packets wait long (CoDel's target is 5 ms).
                for _ in 0..5 {
                    now += 20_000_000;
                    q.dequeue(now, &mut verdicts);
                    dropped_on_dequeue += verdicts.dropped().len();
                    verdicts.drain(|_| {});
                }
            }
            assert!(
                q.drops_on_dequeue() || dropped_on_dequeue == 0,
                "{kind} dropped {dropped_on_dequeue} on dequeue but says it does not"
            );
            if kind == "codel" || kind == "fq_codel" {
                assert!(dropped_on_dequeue > 0, "{kind} should drop on dequeue here");
            }
        }
    }

    #[test]
    fn every_kind_builds_from_its_defaults() {
        let kinds = every_kind();
        assert_eq!(kinds.len(), KINDS.len());
        for (s, kind) in kinds.iter().zip(KINDS) {
            assert_eq!(s.kind(), kind);
            s.validate().unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(s.build::<TestPacket>(1).name(), kind);
        }
    }

    /// Rust's defaults, written out as JSON by the catalogue, read back as
    /// the same parameters: `Default` (or `new`) and the serde defaults are
    /// one.
    #[test]
    fn catalogue_defaults_read_back_as_the_defaults() {
        for (entry, implicit) in catalogue().into_iter().zip(every_kind()) {
            let mut written = serde_json::Map::new();
            written.insert("kind".into(), entry.kind.into());
            for p in &entry.parameters {
                let value = if p.required {
                    serde_json::json!({"packets": 30})
                } else {
                    p.default.clone()
                };
                written.insert(p.name.into(), value);
            }
            let explicit: QdiscSpec = serde_json::from_value(written.clone().into())
                .unwrap_or_else(|e| panic!("{}: {e}", entry.kind));
            let as_json = |s: &QdiscSpec| serde_json::to_value(s).unwrap();
            assert_eq!(as_json(&explicit), as_json(&implicit), "{}", entry.kind);
            assert_eq!(as_json(&explicit), serde_json::Value::from(written));
        }
    }

    #[test]
    fn the_catalogue_gives_each_parameter_its_unit() {
        let unit = |kind: &str, name: &str| {
            let entry = catalogue().into_iter().find(|k| k.kind == kind).unwrap();
            let p = entry.parameters.iter().find(|p| p.name == name);
            p.unwrap_or_else(|| panic!("{kind}.{name}")).unit
        };
        assert_eq!(unit("codel", "target"), Unit::Time);
        assert_eq!(unit("codel", "limit"), Unit::Buffer);
        assert_eq!(unit("fq_codel", "limit"), Unit::Packets);
        assert_eq!(unit("red_linux", "min_th"), Unit::Bytes);
        assert_eq!(unit("red", "min_th"), Unit::Number);
        assert_eq!(unit("red", "link_rate_bps"), Unit::Rate);
        assert_eq!(unit("cbt", "avpkt"), Unit::Bytes);
        assert_eq!(unit("sfb", "freeze_time"), Unit::Time);
        let drr = catalogue().into_iter().find(|k| k.kind == "drr").unwrap();
        let bloom = drr.parameters.iter().find(|p| p.name == "bloom").unwrap();
        assert_eq!(bloom.unit, Unit::Table);
        let period = bloom
            .parameters
            .iter()
            .find(|p| p.name == "period")
            .unwrap();
        assert_eq!(
            (period.unit, period.default.as_u64()),
            (Unit::Time, Some(200_000_000))
        );
        for entry in catalogue() {
            assert!(!entry.summary.is_empty(), "{}", entry.kind);
            for p in &entry.parameters {
                assert!(!p.doc.is_empty(), "{}.{} has no doc", entry.kind, p.name);
            }
        }
    }

    /// The tag and newtype variants keep serde's refusal of unknown fields,
    /// and name them, also inside a table of their own.
    #[test]
    fn unknown_parameters_are_refused_by_name() {
        let (path, message) = refusal(r#"{"kind": "codel", "tagret": 5}"#);
        assert_eq!(path, "tagret");
        assert!(message.contains("unknown parameter"), "{message}");
        assert!(
            message.contains("target"),
            "the known ones are listed: {message}"
        );
        assert_eq!(
            refusal(r#"{"kind": "qsdrr", "limit": {"packets": 1}, "alpha": 2}"#).0,
            "alpha"
        );
        assert_eq!(
            refusal(r#"{"kind": "qsdrr", "limit": {"packets": 1}, "bloom": {"bitz": 3}}"#).0,
            "bloom.bitz"
        );
        assert_eq!(refusal(r#"{"kind": "drr"}"#).0, "limit");
        assert_eq!(refusal(r#"{"kind": "droptial"}"#).0, "kind");
        assert_eq!(refusal(r#"{"limit": {"packets": 5}}"#).0, "kind");
    }

    /// serde's words ("expected u32") become the user's, with the field.
    #[test]
    fn values_of_the_wrong_type_are_refused_in_words() {
        let (path, message) = refusal(r#"{"kind": "fq_codel", "quantum": 1.5}"#);
        assert_eq!(path, "quantum");
        assert_eq!(
            message,
            "expected a whole number from 0 to 4294967295, got 1.5"
        );
        let (path, message) = refusal(r#"{"kind": "red", "max_p": "high"}"#);
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("max_p", r#"expected a number, got "high""#)
        );
        let (path, message) = refusal(r#"{"kind": "red", "gentle": 1}"#);
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("gentle", "expected true or false, got 1")
        );
        let (path, message) = refusal(r#"{"kind": "red", "mode": "bits"}"#);
        assert_eq!(path, "mode");
        assert_eq!(
            message,
            r#""bits" is not a choice here; write "packets" or "bytes""#
        );
        let (path, message) = refusal(
            r#"{"kind": "wdrr", "limit": {"packets": 9}, "weights": [{"flow": -1, "weight": 2}]}"#,
        );
        assert_eq!(path, "weights.flow");
        assert!(message.starts_with("expected a whole number"), "{message}");
        for (json, path) in [
            (r#"{"kind": "codel", "target": -5}"#, "target"),
            (r#"{"kind": "red", "link_rate_bps": 1e7}"#, "link_rate_bps"),
            (
                r#"{"kind": "sfed", "limit": {"packets": 9}, "classes": [{"weight": 2}]}"#,
                "classes.name",
            ),
        ] {
            assert_eq!(refusal(json).0, path, "{json}");
        }
    }

    #[test]
    fn impossible_parameters_name_their_field() {
        for (json, name) in [
            (r#"{"kind": "red", "min_th": 20, "max_th": 10}"#, "min_th"),
            (r#"{"kind": "red", "max_p": 1.5}"#, "max_p"),
            (r#"{"kind": "red", "w_q": 0}"#, "w_q"),
            (r#"{"kind": "red", "limit": {"packets": 0}}"#, "limit"),
            (r#"{"kind": "ared", "min_th": 30, "max_th": 20}"#, "min_th"),
            (r#"{"kind": "ared", "beta": 1.0}"#, "beta"),
            (r#"{"kind": "fred", "max_p": -0.1}"#, "max_p"),
            (
                r#"{"kind": "choke", "min_th": 300, "max_th": 200}"#,
                "min_th",
            ),
            (r#"{"kind": "codel", "interval": 0}"#, "interval"),
            (r#"{"kind": "fq_codel", "flows": 0}"#, "flows"),
            (r#"{"kind": "fq_codel", "quantum": 0}"#, "quantum"),
            (
                r#"{"kind": "pie", "mark_ecn_threshold": 2}"#,
                "mark_ecn_threshold",
            ),
            (r#"{"kind": "pie", "link_rate_bps": 0}"#, "link_rate_bps"),
            (
                r#"{"kind": "red_linux", "min_th": 15000, "max_th": 5000}"#,
                "min_th",
            ),
            // tc cannot find Wlog: burst + 1 - min/avpkt < 1.
            (r#"{"kind": "red_linux", "burst": 2}"#, "burst"),
            // nor Plog for a probability below (max - min)/2^31.
            (r#"{"kind": "cbt", "max_p": 1e-9}"#, "max_p"),
            (r#"{"kind": "dcbt", "gc_interval": 0}"#, "gc_interval"),
            (r#"{"kind": "chips", "chips_ratio": 1.5}"#, "chips_ratio"),
            (r#"{"kind": "sfq", "buckets": 0}"#, "buckets"),
            (r#"{"kind": "sfq", "limit": {"bytes": 1000}}"#, "limit"),
            (r#"{"kind": "mqfq", "hashes": 0}"#, "hashes"),
            (r#"{"kind": "mqfq", "queues": 0}"#, "queues"),
            (r#"{"kind": "droptail", "limit": {"packets": 0}}"#, "limit"),
            (
                r#"{"kind": "blue", "limit": {"packets": 10}, "increment": 1.5}"#,
                "increment",
            ),
            (r#"{"kind": "sfb", "bins": 0}"#, "bins"),
            (
                r#"{"kind": "sfb", "rehash_interval": 10, "warmup_time": 20}"#,
                "warmup_time",
            ),
            (r#"{"kind": "sfb", "decrement": -0.1}"#, "decrement"),
            (
                r#"{"kind": "sfed", "limit": {"packets": 24}, "lambda2": 0.6}"#,
                "lambda2",
            ),
            (
                r#"{"kind": "sfed", "limit": {"packets": 24}, "max_p": 2}"#,
                "max_p",
            ),
            (
                r#"{"kind": "sfed", "limit": {"packets": 24}, "classes": [{"name": "a", "parent": "x", "flows": [1]}]}"#,
                "classes.parent",
            ),
            (
                r#"{"kind": "qsdrr", "limit": {"packets": 100}, "queues": 0}"#,
                "queues",
            ),
            (r#"{"kind": "drr", "limit": {"packets": 0}}"#, "limit"),
            (
                r#"{"kind": "drr", "limit": {"packets": 9}, "quantum": 0}"#,
                "quantum",
            ),
            (
                r#"{"kind": "drr", "limit": {"packets": 9}, "mapping": "hash"}"#,
                "mapping",
            ),
            (
                r#"{"kind": "tdrr", "limit": {"packets": 9}, "weight": 1.5}"#,
                "weight",
            ),
            (
                r#"{"kind": "dtdrr", "limit": {"packets": 9}, "alpha": -1}"#,
                "alpha",
            ),
            (
                r#"{"kind": "dsdrr", "limit": {"packets": 9}, "w_init": 0.6}"#,
                "w_init",
            ),
            (
                r#"{"kind": "dsdrr", "limit": {"packets": 9}, "w_max": 0}"#,
                "w_max",
            ),
            (
                r#"{"kind": "dsdrr", "limit": {"packets": 9}, "period": 0}"#,
                "period",
            ),
            (
                r#"{"kind": "qsdrr", "limit": {"packets": 9}, "queues": 2, "mapping": "bloom", "bloom": {"delta": 300000000}}"#,
                "bloom.delta",
            ),
            (
                r#"{"kind": "qsdrr", "limit": {"packets": 9}, "queues": 2, "mapping": "bloom", "bloom": {"bits": 6}}"#,
                "bloom.hashes",
            ),
            (
                r#"{"kind": "scfq", "limit": {"packets": 9}, "weights": [{"flow": 3, "weight": 0}]}"#,
                "weights",
            ),
        ] {
            assert_eq!(field(json), name, "{json}");
        }
        for json in [
            r#"{"kind": "mqfq", "reorder": "cells", "cell": 48}"#,
            r#"{"kind": "wdrr", "limit": {"bytes": 90000}, "weights": [{"flow": 3, "weight": 10}]}"#,
            r#"{"kind": "sfed", "limit": {"packets": 190}, "randomized": true, "classes": [
                {"name": "cbr", "weight": 3}, {"name": "tcp", "weight": 9},
                {"name": "c0", "parent": "cbr", "weight": 2, "flows": [0]},
                {"name": "c1", "parent": "cbr", "weight": 1, "flows": [1]},
                {"name": "web", "parent": "tcp", "weight": 9, "traffic": ["tcp"], "per_flow": true}]}"#,
        ] {
            spec(json)
                .validate()
                .unwrap_or_else(|e| panic!("{json}: {e}"));
        }
    }

    #[test]
    fn nan_and_negative_probabilities_are_refused_by_name() {
        for bad in [f64::NAN, -0.1, 1.5] {
            let red = RedParams {
                max_p: bad,
                ..Default::default()
            };
            let e = QdiscSpec::Red(red).validate().unwrap_err();
            assert_eq!(e.field, "max_p", "{bad}");
        }
        let chips = ChipsParams {
            chips_ratio: f64::NAN,
            ..Default::default()
        };
        assert_eq!(
            QdiscSpec::Chips(chips).validate().unwrap_err().field,
            "chips_ratio"
        );
    }

    #[test]
    fn the_link_rate_is_filled_once() {
        let mut s = spec(r#"{"kind": "pie"}"#);
        s.fill_link_rate(100_000_000);
        let QdiscSpec::Pie(pie) = s else {
            unreachable!()
        };
        assert_eq!(pie.link_rate_bps, Some(100_000_000));
        let mut s = spec(r#"{"kind": "red", "link_rate_bps": 1000000}"#);
        s.fill_link_rate(100_000_000);
        let QdiscSpec::Red(red) = s else {
            unreachable!()
        };
        assert_eq!(red.link_rate_bps, Some(1_000_000));
        let mut s = spec(r#"{"kind": "chips"}"#);
        s.fill_link_rate(5_000_000);
        let QdiscSpec::Chips(chips) = s else {
            unreachable!()
        };
        assert_eq!(chips.dcbt.red.link_rate_bps, Some(5_000_000));
    }

    #[test]
    fn defaults_come_from_the_sources() {
        let QdiscSpec::Mqfq(mqfq) = spec(r#"{"kind": "mqfq"}"#) else {
            unreachable!()
        };
        assert_eq!(
            (
                mqfq.buffer.limit,
                mqfq.queues,
                mqfq.hashes,
                mqfq.quantum,
                mqfq.reorder
            ),
            (Limit::Packets(40), 16, 2, 1500, MqfqReorder::None)
        );
        let QdiscSpec::Dsdrr(d) = spec(r#"{"kind": "dsdrr", "limit": {"packets": 1000}}"#) else {
            unreachable!()
        };
        assert_eq!(
            (
                d.per_flow.quantum,
                d.per_flow.queues,
                d.alpha,
                d.period,
                d.w_init,
                d.w_max
            ),
            (1500, None, 0.1, 1_000_000_000, 0.1, 0.5)
        );
        assert_eq!(d.over_w, OverW::Accept);
        let QdiscSpec::Tdrr(t) = spec(r#"{"kind": "tdrr", "limit": {"packets": 100}}"#) else {
            unreachable!()
        };
        assert_eq!(
            (t.weight, t.estimator, t.drop_from),
            (0.03125, RateEstimator::Departure, DropEnd::Front)
        );
        let QdiscSpec::Qsdrr(q) = spec(
            r#"{"kind": "qsdrr", "limit": {"packets": 100}, "queues": 10, "mapping": "bloom"}"#,
        ) else {
            unreachable!()
        };
        assert_eq!(q.per_flow.mapping, Some(Mapping::Bloom));
        assert_eq!(q.per_flow.bloom, BloomParams::default());
        let QdiscSpec::Dtdrr(d) = spec(r#"{"kind": "dtdrr", "limit": {"packets": 10}}"#) else {
            unreachable!()
        };
        assert_eq!(d.alpha, 2.0);
    }
}
