//! Disciplines by name and parameters, as scenario files give them.
//!
//! Every discipline has a variant here; [`QdiscSpec::build`] makes it. The
//! Python schema validates the user's values and converts their units before
//! they reach this enum, so the values here are plain integers (packets,
//! bytes, nanoseconds) and fractions.

use serde::{Deserialize, Serialize};

use crate::{DropTail, Limit, Packet, QueueDiscipline};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscSpec {
    Droptail { limit: Limit },
}

impl QdiscSpec {
    /// Make the discipline. `seed` feeds its random stream and hash family,
    /// so two queues of one run never share random numbers.
    pub fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        let _ = seed;
        match *self {
            QdiscSpec::Droptail { limit } => Box::new(DropTail::new(limit)),
        }
    }
}
