//! Many strings in little memory. A network of a million flows has six
//! million link and host names, nearly all a pattern and a number
//! ("access_s41", "access_s41_rev", "s41"); as a `String` each (24 bytes
//! and a heap block of its own) they were a fifth of a flow's memory. Here
//! a string is a template and the number in its hole, 8 bytes, and each
//! template's text is stored once.

use std::borrow::Cow;
use std::fmt;

#[derive(Clone, Default)]
pub struct Names {
    /// Each string: its template, and the number in the template's hole
    /// (`NONE` if the template has none).
    entries: Vec<(u32, u32)>,
    /// The templates' text, end to end (a template is a string without its
    /// number).
    text: String,
    /// Each template: where its text ends (it starts where the previous one
    /// ends) and where the number goes in it (`NONE`: no number).
    templates: Vec<(u32, u32)>,
}

const NONE: u32 = u32::MAX;

/// How many of the latest templates a new string is matched against: a
/// network's names repeat a few patterns in turn. A string that matches
/// none of them adds a template, even one already further back.
const RECENT: usize = 8;

/// A string around its number: the last run of digits, if it is written
/// back the same (no leading zero) and fits in 32 bits.
fn split(s: &str) -> (&str, Option<u32>, &str) {
    let bytes = s.as_bytes();
    let Some(last) = bytes.iter().rposition(u8::is_ascii_digit) else {
        return (s, None, "");
    };
    let first = bytes[..last]
        .iter()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let digits = &s[first..=last];
    match digits.parse::<u32>() {
        Ok(n) if n != NONE && (digits.len() == 1 || !digits.starts_with('0')) => {
            (&s[..first], Some(n), &s[last + 1..])
        }
        _ => (s, None, ""),
    }
}

impl Names {
    /// Room for `count` strings, reserved exactly.
    pub fn with_capacity(count: usize) -> Self {
        Self {
            entries: Vec::with_capacity(count),
            ..Self::default()
        }
    }

    /// Template `t`'s text and the place of its number.
    fn template(&self, t: usize) -> (&str, u32) {
        let start = if t == 0 { 0 } else { self.templates[t - 1].0 };
        let (end, hole) = self.templates[t];
        (&self.text[start as usize..end as usize], hole)
    }

    /// String `i` as [`split`] gives it.
    fn parts(&self, i: usize) -> (&str, Option<u32>, &str) {
        let (t, n) = self.entries[i];
        match self.template(t as usize) {
            (text, NONE) => (text, None, ""),
            (text, hole) => {
                let (before, after) = text.split_at(hole as usize);
                (before, Some(n), after)
            }
        }
    }

    pub fn push(&mut self, s: &str) {
        let (before, number, after) = split(s);
        let hole = number.map_or(NONE, |_| before.len() as u32);
        let is_its = |(text, h): (&str, u32)| {
            h == hole
                && text.len() == before.len() + after.len()
                && text.starts_with(before)
                && text.ends_with(after)
        };
        let latest = self.templates.len().saturating_sub(RECENT)..self.templates.len();
        let t = match latest.rev().find(|&t| is_its(self.template(t))) {
            Some(t) => t,
            None => {
                self.text.push_str(before);
                self.text.push_str(after);
                let end = u32::try_from(self.text.len()).expect("templates beyond 4 GB");
                self.templates.push((end, hole));
                self.templates.len() - 1
            }
        };
        self.entries.push((t as u32, number.unwrap_or(NONE)));
    }

    /// String `i`, written out if it has a number.
    pub fn get(&self, i: usize) -> Cow<'_, str> {
        match self.parts(i) {
            (text, None, _) => Cow::Borrowed(text),
            (before, Some(n), after) => Cow::Owned(format!("{before}{n}{after}")),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Cow<'_, str>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Where `s` is first, compared without writing any string out.
    pub fn position(&self, s: &str) -> Option<usize> {
        let wanted = split(s);
        (0..self.len()).position(|i| self.parts(i) == wanted)
    }

    /// The index of `s`, added at the end if it is not there yet.
    pub fn intern(&mut self, s: &str) -> u32 {
        let i = self.position(s).unwrap_or_else(|| {
            self.push(s);
            self.len() - 1
        });
        i as u32
    }
}

/// The same strings in the same order, however they are stored.
impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.parts(i) == other.parts(i))
    }
}

impl fmt::Debug for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Names {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut names = Names::with_capacity(iter.size_hint().0);
        for s in iter {
            names.push(s.as_ref());
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn strings_come_back_as_pushed() {
        let all = [
            "r1",
            "",
            "access_s0",
            "access_s0_rev",
            "s10",
            "d10",
            "access_s1",
            "s007",
            "7",
            "x99999999999",
            "a1b2",
            "4294967295",
            "4294967294",
            "0",
            "héllo9é",
        ];
        let names: Names = all.iter().collect();
        assert_eq!(names.iter().collect::<Vec<_>>(), all);
        for (i, s) in all.iter().enumerate() {
            assert_eq!(names.position(s), Some(i), "{s}");
        }
        assert_eq!(names.position("s11"), None);
        assert_eq!(names.position("access_s"), None);
    }

    #[test]
    fn a_pattern_is_stored_once() {
        let mut names = Names::default();
        for i in 0..1000 {
            for pattern in ["access_s", "access_d", "s", "d"] {
                names.push(&format!("{pattern}{i}"));
                names.push(&format!("{pattern}{i}_rev"));
            }
        }
        assert_eq!(names.templates.len(), 8);
        assert_eq!(names.get(8 * 517 + 1), "access_s517_rev");
        let mut groups = Names::default();
        assert_eq!(groups.intern("long"), 0);
        assert_eq!(groups.intern("short"), 1);
        assert_eq!(groups.intern("long"), 0);
        assert_eq!(groups, ["long", "short"].iter().collect());
    }
}
