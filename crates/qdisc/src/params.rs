//! Parameters as scenario files give them, each declared once.
//!
//! A discipline declares its parameters with `params!`: for every field its
//! doc (with the source of its default), its type, its [`Unit`] and its
//! default, or none when the user must give it. From that one declaration come
//! the struct, its serde form, its defaults (`Default`, or `new` taking the
//! parameters without one), and its entries in the catalogue ([`Param`]) from
//! which the Python face learns every parameter's unit and default.
//!
//! Deserializing refuses unknown parameters and names the parameter in every
//! error, as a path (`bloom.period: ...`), in words a user reads rather than
//! serde's (`expected a whole number from 0 to 4294967295, got 1.5`, not
//! `invalid type: floating point, expected u32`). The checks many disciplines
//! share (a probability, a positive count, thresholds) live here too.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::Limit;

/// The link rate assumed when neither the user nor the simulator gave one:
/// tc's default `bandwidth`, and seed 004's bottleneck.
pub const DEFAULT_LINK_RATE_BPS: u64 = 10_000_000;

/// What a discipline built from parameters that `validate` refuses panics
/// with (a bug: the caller skipped the check).
pub const VALID: &str = "a discipline built from parameters that fail validate()";

/// Nanoseconds in a millisecond, for defaults written in milliseconds.
pub const MS: u64 = 1_000_000;

/// How a parameter is written in a scenario file, and what the core holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A time with its unit (`"5ms"`); nanoseconds in the core.
    Time,
    /// A size with its unit (`"1500B"`, `"64kB"`); bytes in the core.
    Bytes,
    /// A count of packets with its unit (`"100pkt"`).
    Packets,
    /// A buffer in packets or bytes (`"100pkt"`, `"150kB"`): a [`Limit`].
    Buffer,
    /// A rate with its unit (`"10Mbps"`); bits per second in the core. The
    /// core's name ends in `_bps`; the user writes it without (`link_rate`).
    Rate,
    /// A plain number: a probability, a weight, a factor, a count.
    Number,
    /// `true` or `false`.
    Flag,
    /// One of a few names (`"packets"` or `"bytes"`).
    Choice,
    /// A name.
    Text,
    /// A list of plain numbers.
    Numbers,
    /// A list of names.
    Choices,
    /// A table of parameters of its own.
    Table,
    /// A list of tables, each with the same parameters.
    Tables,
}

/// One parameter in the catalogue.
#[derive(Clone, Debug, Serialize)]
pub struct Param {
    pub name: &'static str,
    pub unit: Unit,
    /// What it is and where its default comes from.
    pub doc: String,
    /// No default: the user must give it.
    pub required: bool,
    /// The default, as the core's JSON (null when required or absent).
    pub default: Value,
    /// The parameters of a table, or of each table of a list.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Param>,
}

impl Param {
    pub fn new<T: Serialize>(
        name: &'static str,
        unit: Unit,
        doc: &str,
        default: Option<T>,
        parameters: Option<fn() -> Vec<Param>>,
    ) -> Self {
        Self {
            name,
            unit,
            doc: doc.split_whitespace().collect::<Vec<_>>().join(" "),
            required: default.is_none(),
            default: default.map_or(Value::Null, |d| {
                serde_json::to_value(d).expect("a default serializes")
            }),
            parameters: parameters.map_or_else(Vec::new, |f| f()),
        }
    }
}

/// A parameter set declared with `params!`.
pub trait Params: Sized {
    /// Take this set's parameters out of `table`, the defaults for those
    /// absent. Errors read `path: message`.
    fn take(table: &mut Table) -> Result<Self, String>;

    /// Every parameter, in the order declared.
    fn parameters() -> Vec<Param>;
}

/// The entries of a table being read, taken one parameter at a time.
pub struct Table(Map<String, Value>);

impl Table {
    /// The value of `name`, if given.
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, String> {
        match self.0.remove(name) {
            None => Ok(None),
            Some(value) => T::deserialize(value)
                .map(Some)
                .map_err(|e| within(name, &e.to_string())),
        }
    }

    /// The value of `name`, which has no default.
    pub fn required<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, String> {
        self.take(name)?
            .ok_or_else(|| format!("{name}: required (it has no default)"))
    }
}

/// Deserialize a parameter set: the serde form of every struct of `params!`.
pub fn deserialize<'de, D: Deserializer<'de>, T: Params>(d: D) -> Result<T, D::Error> {
    let mut table =
        Table(Map::deserialize(d).map_err(|e| D::Error::custom(readable(&e.to_string())))?);
    let params = T::take(&mut table).map_err(D::Error::custom)?;
    match table.0.keys().next() {
        None => Ok(params),
        Some(unknown) => {
            let known: Vec<_> = T::parameters().iter().map(|p| p.name).collect();
            Err(D::Error::custom(format!(
                "{unknown}: unknown parameter (known: {})",
                known.join(", ")
            )))
        }
    }
}

/// Split `message` into the path of the parameter it is about and what it
/// says: `("bloom.period", "...")`. The path is empty when it names none.
pub fn split_path(message: &str) -> (&str, &str) {
    match message.split_once(": ") {
        Some((path, rest)) if is_path(path) => (path, rest),
        _ => ("", message),
    }
}

fn is_path(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The error `message` of parameter `name`'s value, with `name` in front of
/// its path (a table's own parameters name themselves).
fn within(name: &str, message: &str) -> String {
    match split_path(message) {
        ("", _) => format!("{name}: {}", readable(message)),
        (path, rest) => format!("{name}.{path}: {rest}"),
    }
}

/// serde's message about a value in a user's words.
pub fn readable(message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        if let Some((got, expected)) = rest.split_once(", expected ") {
            let choices = expected.trim_start_matches("one of ");
            return format!(
                "{} is not a choice here; write {}",
                got.replace('`', "\""),
                choices.replace('`', "\"")
            );
        }
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((got, expected)) = rest.rsplit_once(", expected ") {
                return format!(
                    "expected {}, got {}",
                    expected_words(expected),
                    got_words(got)
                );
            }
        }
    }
    message.to_string()
}

fn expected_words(expected: &str) -> String {
    let whole = |max: u64| format!("a whole number from 0 to {max}");
    match expected {
        "u8" => whole(u8::MAX as u64),
        "u16" => whole(u16::MAX as u64),
        "u32" => whole(u32::MAX as u64),
        "u64" | "usize" => "a whole number, 0 or more".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "a list".into(),
        "a map" => "a table".into(),
        "enum Limit" => "a buffer in packets or bytes".into(),
        e if e.starts_with("struct ") => "a table".into(),
        e if e.starts_with("enum ") => "one of its choices".into(),
        e => e.into(),
    }
}

fn got_words(got: &str) -> String {
    match got.split_once(' ') {
        Some(("floating" | "integer" | "boolean", _)) | Some(("string", _)) => {
            let value = got.rsplit_once(' ').map_or(got, |(_, v)| v);
            value.trim_matches('`').to_string()
        }
        _ => match got {
            "map" => "a table".into(),
            "sequence" => "a list".into(),
            "null" | "unit value" => "nothing".into(),
            g => g.into(),
        },
    }
}

/// A parameter that cannot be read or is impossible: the path of its field
/// within the discipline's table (`bloom.period`; `kind` for the kind; empty
/// when the mistake names no field), and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub field: String,
    pub message: String,
}

impl SpecError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

/// Refuse parameter `field` with `message`.
pub fn refuse<T>(field: &str, message: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError::new(field, message))
}

/// A buffer of at least one packet or byte.
pub fn positive_limit(limit: Limit) -> Result<(), SpecError> {
    match limit {
        Limit::Packets(0) | Limit::Bytes(0) => refuse("limit", "must be above zero"),
        _ => Ok(()),
    }
}

/// A buffer counted in packets, at least one; `why` says why not bytes.
pub fn packets_only(limit: Limit, why: &str) -> Result<u64, SpecError> {
    match limit {
        Limit::Packets(0) => refuse("limit", "must be above zero"),
        Limit::Packets(n) => Ok(n),
        Limit::Bytes(_) => refuse("limit", format!("must be in packets ({why})")),
    }
}

/// The packets of a buffer that [`packets_only`] has passed.
pub fn checked_packets(limit: Limit) -> u64 {
    match limit {
        Limit::Packets(n) => n,
        Limit::Bytes(_) => panic!("{VALID}"),
    }
}

/// A count or a size above zero.
pub fn nonzero<T: PartialEq + Default>(field: &'static str, v: T) -> Result<(), SpecError> {
    if v == T::default() {
        refuse(field, "must be above zero")
    } else {
        Ok(())
    }
}

/// A probability, from 0 to 1.
pub fn probability(field: &'static str, p: f64) -> Result<(), SpecError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        refuse(field, format!("{p} is not a probability in [0, 1]"))
    }
}

/// An averaging weight, above 0 and at most 1.
pub fn weight(field: &'static str, w: f64) -> Result<(), SpecError> {
    if w > 0.0 && w <= 1.0 {
        Ok(())
    } else {
        refuse(field, format!("{w} is not a weight in (0, 1]"))
    }
}

/// A finite number above zero.
pub fn positive(field: &'static str, x: f64) -> Result<(), SpecError> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        refuse(field, format!("must be a positive number, got {x}"))
    }
}

/// A number of zero or more.
pub fn not_negative(field: &'static str, x: f64) -> Result<(), SpecError> {
    if x >= 0.0 {
        Ok(())
    } else {
        refuse(field, format!("{x} is negative"))
    }
}

/// RED's thresholds: `0 <= min_th < max_th`.
pub fn thresholds(min_th: f64, max_th: f64) -> Result<(), SpecError> {
    not_negative("min_th", min_th)?;
    if max_th.is_nan() || min_th >= max_th {
        return refuse(
            "min_th",
            format!("min_th {min_th} must be below max_th {max_th}"),
        );
    }
    Ok(())
}

/// A link rate the user gave, if any, above zero.
pub fn link_rate(link_rate_bps: Option<u64>) -> Result<(), SpecError> {
    if link_rate_bps == Some(0) {
        return refuse("link_rate_bps", "must be above zero");
    }
    Ok(())
}

/// Declare a parameter set: a struct whose fields each carry a doc, a type,
/// a [`Unit`] and a default, and everything that follows from them (see the
/// module's doc).
///
/// ```text
/// params! {
///     /// CoDel's parameters.
///     pub struct CodelParams {
///         required {                       // optional: no default
///             /// The buffer.
///             pub limit: Limit [Buffer],
///         }
///         #[flatten] pub queues: Other,    // optional: another set, inline
///         /// TARGET (RFC 8289 section 4.4).
///         pub target: Time [Time] = 5 * MS,
///     }
/// }
/// ```
///
/// A parameter's docs may be followed by one `#[serde(...)]` attribute, such
/// as `skip_serializing_if` for a parameter added later that must leave the
/// specs (and run hashes) of those not setting it as they were.
///
/// A set with required parameters gets `new(required...)`; one without gets
/// `Default`. A flattened set's parameters are written at the same level.
macro_rules! params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            required {
                $( $(#[doc = $rdoc:literal])* pub $rfield:ident : $rty:ty [$runit:ident], )*
            }
            $( #[flatten] pub $group:ident : $gty:ty, )*
            $( $(#[doc = $doc:literal])* $(#[serde($($serde:tt)*)])? pub $field:ident : $ty:ty [$unit:ident] = $default:expr, )*
        }
    ) => {
        $crate::params::params!(@impl $(#[$meta])* $name
            { $( $(#[doc = $rdoc])* $rfield: $rty [$runit], )* }
            { $( $group: $gty, )* }
            { $( $(#[doc = $doc])* $(#[serde($($serde)*)])? $field: $ty [$unit] = $default, )* });

        impl $name {
            /// The parameters without a default as given, every other at its default.
            pub fn new($( $rfield: $rty ),*) -> Self {
                Self {
                    $( $rfield, )*
                    $( $group: Default::default(), )*
                    $( $field: $default, )*
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( #[flatten] pub $group:ident : $gty:ty, )*
            $( $(#[doc = $doc:literal])* $(#[serde($($serde:tt)*)])? pub $field:ident : $ty:ty [$unit:ident] = $default:expr, )*
        }
    ) => {
        $crate::params::params!(@impl $(#[$meta])* $name
            {}
            { $( $group: $gty, )* }
            { $( $(#[doc = $doc])* $(#[serde($($serde)*)])? $field: $ty [$unit] = $default, )* });

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $( $group: Default::default(), )*
                    $( $field: $default, )*
                }
            }
        }
    };
    (@nested Table, $ty:ty) => {
        Some(<$ty as $crate::params::Params>::parameters as fn() -> Vec<$crate::params::Param>)
    };
    (@nested Tables, $ty:ty) => {
        Some(<<$ty as IntoIterator>::Item as $crate::params::Params>::parameters
            as fn() -> Vec<$crate::params::Param>)
    };
    (@nested $unit:ident, $ty:ty) => {
        None
    };
    (
        @impl $(#[$meta:meta])* $name:ident
        { $( $(#[doc = $rdoc:literal])* $rfield:ident : $rty:ty [$runit:ident], )* }
        { $( $group:ident : $gty:ty, )* }
        { $( $(#[doc = $doc:literal])* $(#[serde($($serde:tt)*)])? $field:ident : $ty:ty [$unit:ident] = $default:expr, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Serialize)]
        pub struct $name {
            $( $(#[doc = $rdoc])* pub $rfield: $rty, )*
            $( #[serde(flatten)] pub $group: $gty, )*
            $( $(#[doc = $doc])* $(#[serde($($serde)*)])? pub $field: $ty, )*
        }

        impl $crate::params::Params for $name {
            fn take(table: &mut $crate::params::Table) -> Result<Self, String> {
                Ok(Self {
                    $( $rfield: table.required(stringify!($rfield))?, )*
                    $( $group: <$gty as $crate::params::Params>::take(table)?, )*
                    $( $field: table.take(stringify!($field))?.unwrap_or_else(|| $default), )*
                })
            }

            fn parameters() -> Vec<$crate::params::Param> {
                use $crate::params::{Param, Unit};
                let required = [$(
                    Param::new(
                        stringify!($rfield),
                        Unit::$runit,
                        concat!($($rdoc, "\n"),*),
                        None::<$rty>,
                        $crate::params::params!(@nested $runit, $rty),
                    ),
                )*];
                let groups: Vec<Vec<Param>> =
                    vec![$( <$gty as $crate::params::Params>::parameters(), )*];
                let own = [$(
                    Param::new(
                        stringify!($field),
                        Unit::$unit,
                        concat!($($doc, "\n"),*),
                        Some::<$ty>($default),
                        $crate::params::params!(@nested $unit, $ty),
                    ),
                )*];
                required.into_iter().chain(groups.into_iter().flatten()).chain(own).collect()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::params::deserialize(d)
            }
        }
    };
}

pub(crate) use params;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_told_from_serdes_own_words() {
        assert_eq!(
            split_path("bloom.period: too long"),
            ("bloom.period", "too long")
        );
        assert_eq!(
            split_path("invalid type: map, expected f64"),
            ("", "invalid type: map, expected f64")
        );
        assert_eq!(
            split_path("missing field `kind`"),
            ("", "missing field `kind`")
        );
        assert_eq!(
            within("bloom", "bits: must be at least 1"),
            "bloom.bits: must be at least 1"
        );
        assert_eq!(
            within("w_q", "invalid type: string \"x\", expected f64"),
            "w_q: expected a number, got \"x\""
        );
    }

    #[test]
    fn serdes_words_become_a_users() {
        for (serde, user) in [
            (
                "invalid type: floating point `1.5`, expected u32",
                "expected a whole number from 0 to 4294967295, got 1.5",
            ),
            (
                "invalid value: integer `-3`, expected u64",
                "expected a whole number, 0 or more, got -3",
            ),
            (
                "invalid type: boolean `true`, expected f64",
                "expected a number, got true",
            ),
            (
                "invalid type: null, expected a boolean",
                "expected true or false, got nothing",
            ),
            (
                "invalid type: sequence, expected f64",
                "expected a number, got a list",
            ),
            (
                "unknown variant `x`, expected one of `a`, `b`, `c`",
                r#""x" is not a choice here; write "a", "b", "c""#,
            ),
            ("a message of our own", "a message of our own"),
        ] {
            assert_eq!(readable(serde), user, "{serde}");
        }
    }
}
