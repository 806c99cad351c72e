//! Routes: the links a packet crosses, one flat table for every flow.

/// A route: where its links start in the shared table. Packets carry it,
/// so forwarding never looks up the flow.
pub type RouteRef = u32;

/// An entry of the routes' table is a link, or the mark that closes a
/// route. The mark carries the first link of the route the answers take
/// (a data packet's ACK, an ACK's data) and a link entry whether the link
/// is express: what the event loop fetches early without reading the flow
/// or the link first (`Simulation::prefetch_ahead`). The mark also says
/// whether the packets reaching it may be answered ahead.
const END: u32 = 1 << 31;
/// On a link entry: the link is express (a hint for prefetching only).
const EXPRESS: u32 = 1 << 30;
/// On an end mark: the packet may be answered ahead of its arrival
/// (`Simulation::answer_ahead`).
const AHEAD: u32 = 1 << 30;
/// The link's number in an entry; in an end mark, no answer's link.
const LINK: u32 = EXPRESS - 1;

/// Where a packet goes after a hop, as the prefetching needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upcoming {
    /// A link, and the express link after it, if any.
    Link(u32, Option<u32>),
    /// The route's end: the host, and the first link of the answer's route.
    Host(Option<u32>),
}

/// Every route's links, one flat table, each route closed by an end mark.
#[derive(Default)]
pub struct Routes {
    links: Vec<u32>,
}

impl Routes {
    /// Room for `entries` more: the links of the routes to come and an
    /// end mark for each, exactly.
    pub fn reserve_exact(&mut self, entries: usize) {
        self.links.reserve_exact(entries);
    }

    /// A flow's two routes, each's end mark naming the other's first link.
    pub fn intern_pair(&mut self, forward: &[u32], reverse: &[u32]) -> (RouteRef, RouteRef) {
        let f = self.intern(forward, reverse.first());
        (f, self.intern(reverse, forward.first()))
    }

    fn intern(&mut self, path: &[u32], answer: Option<&u32>) -> RouteRef {
        let start = self.links.len() as u32;
        assert!(path.iter().all(|&l| l < LINK), "fewer than 2^30 links");
        self.links.extend_from_slice(path);
        self.links.push(END | answer.copied().unwrap_or(LINK));
        start
    }

    /// The link at `hop` of the route, or `None` past its end.
    #[inline]
    pub fn link(&self, route: RouteRef, hop: u8) -> Option<u32> {
        let l = self.links[route as usize + hop as usize];
        (l & END == 0).then_some(l & LINK)
    }

    /// Where the link at `hop` of the route is kept (to fetch it early).
    #[inline]
    pub fn entry(&self, route: RouteRef, hop: u8) -> &u32 {
        &self.links[route as usize + hop as usize]
    }

    /// What follows at `hop` of the route (to fetch it early).
    #[inline]
    pub fn upcoming(&self, route: RouteRef, hop: u8) -> Upcoming {
        let at = route as usize + hop as usize;
        let l = self.links[at];
        let known = |l: u32| (l & LINK != LINK).then_some(l & LINK);
        if l & END != 0 {
            return Upcoming::Host(known(l));
        }
        let after = self.links[at + 1];
        let express = (after & (END | EXPRESS) == EXPRESS).then_some(after & LINK);
        Upcoming::Link(l & LINK, express)
    }

    /// Mark the entries of the links `is_express` says are express (only
    /// `upcoming` reads the marks).
    pub fn mark_express(&mut self, is_express: impl Fn(u32) -> bool) {
        for e in &mut self.links {
            if *e & END == 0 {
                *e = if is_express(*e & LINK) {
                    *e | EXPRESS
                } else {
                    *e & !EXPRESS
                };
            }
        }
    }

    /// If `hop` is the end of the route and the packet reaching it may be
    /// answered ahead: the first link of the answer's route.
    #[inline(always)]
    pub fn answered_ahead(&self, route: RouteRef, hop: u8) -> Option<u32> {
        let l = self.links[route as usize + hop as usize];
        (l & (END | AHEAD) == END | AHEAD).then_some(l & LINK)
    }

    /// Mark the end of `route` as answered ahead, or not. Its answer's
    /// route must have a first link.
    pub fn set_answered_ahead(&mut self, route: RouteRef, ahead: bool) {
        let end = route as usize + self.links(route).count();
        debug_assert!(self.links[end] & LINK != LINK || !ahead);
        if ahead {
            self.links[end] |= AHEAD;
        } else {
            self.links[end] &= !AHEAD;
        }
    }

    /// Every link of every route interned so far, with the link before it
    /// on that route (`None` on a first hop: the host feeds it).
    pub fn hops(&self) -> impl Iterator<Item = (Option<u32>, u32)> + '_ {
        let mut previous = None;
        self.links.iter().filter_map(move |&l| {
            if l & END != 0 {
                previous = None;
                return None;
            }
            Some((previous.replace(l & LINK), l & LINK))
        })
    }

    pub fn links(&self, route: RouteRef) -> impl Iterator<Item = u32> + '_ {
        let rest = &self.links[route as usize..];
        rest.iter()
            .take_while(|&&l| l & END == 0)
            .map(|&l| l & LINK)
    }
}
