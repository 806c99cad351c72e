//! Which packets a trace records: those on the links named and of the
//! flows named, each list absent for "any".

/// A set of links and a set of flows, each as a flag per index.
#[derive(Clone, Debug)]
pub struct Filter {
    links: Option<Vec<bool>>,
    flows: Option<Vec<bool>>,
}

impl Filter {
    /// Links and flows by number (`None`: any); `links` is how many links
    /// there are. A flow numbered past the last named matches nothing.
    pub fn new(links: Option<&[u32]>, flows: Option<&[u32]>, link_count: usize) -> Self {
        let flags = |named: &[u32], len: usize| {
            let mut flags = vec![false; len];
            for &i in named {
                flags[i as usize] = true;
            }
            flags
        };
        let flow_count = flows.map_or(0, |f| f.iter().max().map_or(0, |&m| m as usize + 1));
        Self {
            links: links.map(|l| flags(l, link_count)),
            flows: flows.map(|f| flags(f, flow_count)),
        }
    }

    /// Whether a packet of `flow` at `link` is recorded.
    #[inline]
    pub fn matches(&self, link: u32, flow: u32) -> bool {
        let has = |set: &Option<Vec<bool>>, i: u32| {
            set.as_ref()
                .is_none_or(|flags| flags.get(i as usize).copied().unwrap_or(false))
        };
        has(&self.links, link) && has(&self.flows, flow)
    }
}

#[cfg(test)]
mod tests {
    use super::Filter;

    #[test]
    fn a_packet_matches_when_both_lists_have_it() {
        let both = Filter::new(Some(&[1, 3]), Some(&[0, 5]), 4);
        assert!(both.matches(1, 0) && both.matches(3, 5));
        assert!(!both.matches(0, 0), "link 0 is not named");
        assert!(!both.matches(1, 2), "flow 2 is not named");
        assert!(!both.matches(1, 6), "flows past the last named");
        let any_flow = Filter::new(Some(&[2]), None, 4);
        assert!(any_flow.matches(2, 1_000_000) && !any_flow.matches(1, 0));
        let any_link = Filter::new(None, Some(&[7]), 4);
        assert!(any_link.matches(3, 7) && !any_link.matches(3, 6));
    }
}
