//! The overload model (docs/chaos.md), once for both engines (the seed explainer's
//! rule): a service works on every request for its service time; whenever an
//! arriving request raises the number in flight above `capacity`, every
//! request then in flight, the new one included, is marked. A marked request
//! keeps its slot for its full service time and then fails as a timeout. A
//! request that ends at t is no longer in flight for one arriving at t (the
//! engines order ends before starts).
//!
//! Plain state, no clock and no I/O: the simulator keeps one per service, the
//! chaos tier one behind a mutex.

/// The requests in flight at one service, for the overload model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct InFlight {
    count: u64,
    /// Times an arrival raised `count` above capacity; a request is marked
    /// when this grew while it was in flight (or on its own arrival).
    overflows: u64,
}

/// A request's place in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    overflows_seen: u64,
}

impl InFlight {
    /// A request arrives under `capacity` (`None`: unbounded).
    pub(crate) fn enter(&mut self, capacity: Option<u32>) -> Ticket {
        self.count += 1;
        let ticket = Ticket {
            overflows_seen: self.overflows,
        };
        if capacity.is_some_and(|c| self.count > u64::from(c)) {
            self.overflows += 1;
        }
        ticket
    }

    /// The request ends; whether it was marked while in flight (it fails).
    pub(crate) fn leave(&mut self, ticket: Ticket) -> bool {
        self.count = self.count.saturating_sub(1);
        self.overflows > ticket.overflows_seen
    }

    /// Requests in flight now.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_marks_everyone_in_flight_and_only_them() {
        let mut f = InFlight::default();
        let a = f.enter(Some(2));
        let b = f.enter(Some(2));
        let c = f.enter(Some(2)); // 3 > 2: a, b and c are marked
        assert!(f.leave(a));
        assert!(f.leave(b));
        let d = f.enter(Some(2)); // c and d: 2 in flight, d unmarked
        assert!(f.leave(c));
        assert!(!f.leave(d));
        let e = f.enter(Some(1));
        let g = f.enter(Some(1)); // 2 > 1: both marked
        assert!(f.leave(e) && f.leave(g));
        let h = f.enter(None);
        assert!(!f.leave(h));
        assert_eq!(f.count(), 0);
    }
}
