//! Many strings in one buffer. A network of a million flows has six million
//! link and host names; as a `String` each (24 bytes and a heap block of
//! its own) they were a fifth of a flow's memory. Here a name costs its
//! bytes and 4 more, and the result tables hand the same buffer on.

/// Strings kept end to end in one `String`, each found by where it ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    text: String,
    /// End of each string in `text`; the start is the previous end.
    ends: Vec<u32>,
}

impl Names {
    /// Room for `count` strings of `bytes` in all, reserved exactly.
    pub fn with_capacity(count: usize, bytes: usize) -> Self {
        Self {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(count),
        }
    }

    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        let end = u32::try_from(self.text.len()).expect("names beyond 4 GB");
        self.ends.push(end);
    }

    #[inline]
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    pub fn position(&self, s: &str) -> Option<usize> {
        self.iter().position(|n| n == s)
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

impl<S: AsRef<str>> FromIterator<S> for Names {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut names = Names::default();
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
    fn names_come_back_as_pushed() {
        let mut names: Names = ["r1", "", "access_s0"].into_iter().collect();
        assert_eq!(names.intern("access_s0"), 2);
        assert_eq!(names.intern("d0"), 3);
        assert_eq!(
            names.iter().collect::<Vec<_>>(),
            ["r1", "", "access_s0", "d0"]
        );
        assert_eq!(names.get(1), "");
        assert_eq!(names.position("r2"), None);
    }
}
