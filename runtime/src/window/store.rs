//! The window state store of one window ([`WindowStore`]): per key, the
//! records its sliding event-time window still needs, and each entering
//! record's aggregates over its window. [`crate::window::SharedWindowStore`]
//! shards it for many threads.
//!
//! Per key the store keeps its latest time and its records (one buffer,
//! [`KeyRecords`]); an index from the key's hash to its slot; and one
//! recency list of the keys, least recently entered first. Observing a
//! record costs a lookup, a pass over its key's records and amortised O(1)
//! for the rest. What a key holds depends on that key's records alone
//! (SIGNALS.md: no global watermark forgets keys):
//!
//! - a key's records that no later record can see (time at or below
//!   `latest - span - grace`, with the key's latest time before the
//!   entering record) are pruned when the key is touched;
//! - past [`WindowLimits::keys`] keys, or [`WindowLimits::bytes`] bytes in
//!   all, the least recently entered keys are evicted;
//! - a record that would take its key past [`WindowLimits::key_records`]
//!   or [`WindowLimits::key_bytes`] (counting the records it leaves in
//!   reach) does not enter (it moves its key's latest time, as any record
//!   seen does); its key remembers the times such records had, and a later
//!   record whose window reaches one of them enters but reads as the bound
//!   ([`Observation::Incomplete`]), never as a count that silently misses
//!   a record. Records out of reach wait for the key's next record to be
//!   pruned, so a key's buffer holds at most twice its bound;
//! - an entered record can be withdrawn ([`WindowStore::withdraw`]) when
//!   its request is not answered, as if it had not come.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::mem::size_of;

use super::aggregate::{Met, aggregate};
use super::bounds::Bounds;
use super::index::HashIndex;
use super::key_records::{KeyRecords, KeyView, allocation_bytes, key_len, record_len};
use super::limits::{Bound, WindowLimits};
use super::shape::{Aggregated, Arg, Key, ShapeError, WindowShape};

/// What became of an observed record.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Observation {
    /// The record entered its key's window; `out` holds its aggregates.
    Entered(Ticket),
    /// The record entered, but its window reaches a record that its key's
    /// bound turned away: reading it is an error naming the bound; `out`
    /// is empty.
    Incomplete(Ticket, Bound),
    /// The record would take its key past a bound: it did not enter, and
    /// reading its window is an error naming the bound; `out` is empty.
    Full(Bound),
    /// The record is late (`time < latest(key) - grace`): it did not enter
    /// and changed nothing; `out` is empty.
    Late,
    /// The arguments do not fit the window's shape (a caller's bug): the
    /// record did not enter, and `out` holds, for each aggregate, the
    /// internal error that says which argument does not fit.
    Refused,
}

/// An entered record, to withdraw it ([`WindowStore::withdraw`]): its
/// key's hash, the key's incarnation in the store and the record's number
/// among the key's records.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Ticket {
    pub(super) hash: u64,
    generation: u64,
    number: u64,
    /// The key's latest time before the record.
    latest: i64,
}

/// No slot: the end of a list.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// The most keys a store holds: slots are numbered by `u32`, [`NO_SLOT`]
/// excluded.
const MAX_SLOTS: usize = (u32::MAX - 1) as usize;

/// How many dropped keys' buffers a store keeps for new keys: a stream
/// whose keys come and go allocates and frees little per record.
const SPARES: usize = 64;

/// The largest buffer kept for reuse, in bytes.
const SPARE_BYTES: usize = 256;

/// The times of the records a key's bound turned away, and the bound.
#[derive(Clone, Copy, Debug)]
struct TurnedAway {
    first: i64,
    last: i64,
    bound: Bound,
}

/// One held key.
#[derive(Debug)]
struct Slot {
    records: KeyRecords,
    /// The key's hash, so that dropping the key reads neither the key nor
    /// the hasher.
    hash: u64,
    /// The greatest time entered for the key (`i64::MIN` before any).
    latest: i64,
    /// Which key this slot holds, unique in the store: a withdrawn ticket
    /// of a key since dropped and entered again finds nothing.
    generation: u64,
    /// The records the key entered (the next record's number).
    entered: u64,
    turned_away: Option<TurnedAway>,
    /// The next older and next newer key in the recency list.
    older: u32,
    newer: u32,
    /// The next slot whose key has the same hash.
    same_hash: u32,
}

/// The window state of one window: see the module's doc.
pub struct WindowStore {
    shape: WindowShape,
    bounds: Bounds,
    limits: WindowLimits,
    /// The most keys held (at least one).
    capacity: usize,
    hasher: RandomState,
    /// The bits of a key's hash the index keys by: all of them, but for
    /// tests that make keys collide.
    pub(super) hash_mask: u64,
    /// Each key's hash to the first slot of a key with that hash; slots of
    /// keys with one hash are chained by [`Slot::same_hash`], so the key
    /// itself is kept once, in its records' buffer.
    index: HashIndex,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The ends of the recency list.
    oldest: u32,
    newest: u32,
    held: usize,
    generations: u64,
    evicted: u64,
    full: u64,
    /// The heap bytes of all the keys' buffers.
    records_bytes: usize,
    /// The buffers of dropped keys, for the next keys to reuse: at most
    /// [`SPARES`] of at most [`SPARE_BYTES`] each.
    spares: Vec<KeyRecords>,
    /// Scratch for `distinct`.
    met: Vec<Met>,
}

impl WindowStore {
    /// A store for a window of `shape` within `limits` (a key bound of 0
    /// holds one key). Fails when the store cannot keep the shape
    /// ([`WindowShape::check`]).
    pub fn new(shape: WindowShape, limits: WindowLimits) -> Result<WindowStore, ShapeError> {
        WindowStore::with_hasher(shape, limits, RandomState::new())
    }

    pub(super) fn with_hasher(
        shape: WindowShape,
        limits: WindowLimits,
        hasher: RandomState,
    ) -> Result<WindowStore, ShapeError> {
        shape.check()?;
        Ok(WindowStore {
            bounds: Bounds::new(shape.span, shape.grace),
            shape,
            capacity: limits.keys.unwrap_or(MAX_SLOTS).clamp(1, MAX_SLOTS),
            limits,
            hasher,
            hash_mask: u64::MAX,
            index: HashIndex::default(),
            slots: Vec::new(),
            free: Vec::new(),
            oldest: NO_SLOT,
            newest: NO_SLOT,
            held: 0,
            generations: 0,
            evicted: 0,
            full: 0,
            records_bytes: 0,
            spares: Vec::new(),
            met: Vec::new(),
        })
    }

    /// Enters one record of `key` at `time` with one argument per aggregate
    /// (unless it is late or over a bound) and writes its aggregates over
    /// its window to `out` (cleared first; one per aggregate, in order).
    pub fn observe(
        &mut self,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        let hash = self.hash(KeyView::from(key));
        self.observe_hashed(hash, key, time, args, out)
    }

    /// The keys held.
    pub fn keys(&self) -> usize {
        self.held
    }

    /// The keys dropped because the store held its most keys or bytes.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The records whose window read as a key's bound
    /// ([`Observation::Full`], [`Observation::Incomplete`]).
    pub fn full(&self) -> u64 {
        self.full
    }

    /// The bytes the keys' buffers hold, as [`WindowLimits::bytes`]
    /// counts them.
    pub fn records_bytes(&self) -> usize {
        self.records_bytes
    }

    pub fn shape(&self) -> &WindowShape {
        &self.shape
    }

    /// The heap bytes the store holds, as the allocator counts them: the
    /// keys' buffers, the slots, the index and the scratch space, each
    /// block rounded as [`allocation_bytes`] says.
    pub fn heap_bytes(&self) -> usize {
        let blocks = [
            self.slots.capacity() * size_of::<Slot>(),
            self.free.capacity() * size_of::<u32>(),
            self.met.capacity() * size_of::<Met>(),
            self.shape.aggregates.capacity() * size_of::<(ir::AggregateKind, super::ArgKind)>(),
            self.index.heap_bytes(),
        ];
        let spares: usize = self.spares.iter().map(KeyRecords::heap_bytes).sum();
        blocks.into_iter().map(allocation_bytes).sum::<usize>()
            + allocation_bytes(self.spares.capacity() * size_of::<KeyRecords>())
            + self.records_bytes
            + spares
    }

    pub(super) fn observe_hashed(
        &mut self,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        out.clear();
        if let Some(error) = self.shape.misfit(args) {
            out.resize(self.shape.aggregates.len(), Aggregated::Failed(error));
            return Observation::Refused;
        }
        let found = self.find(hash, key);
        if let Some(slot) = found
            && self.bounds.is_late(time, self.slot(slot).latest)
        {
            return Observation::Late;
        }
        let slot = match found {
            Some(slot) => slot,
            None => match self.insert(hash, key) {
                Ok(slot) => slot,
                Err(bound) => {
                    self.full += 1;
                    return Observation::Full(bound);
                }
            },
        };
        let observation = self.enter(slot, time, args, out);
        self.mark_newest(slot);
        self.shed_bytes();
        if !matches!(observation, Observation::Entered(_)) {
            self.full += 1;
        }
        observation
    }

    /// Withdraws the record of `ticket`, as if it had not come: the record
    /// leaves its key (the key too, when it held nothing else) and the
    /// key's latest time goes back to what it was before the record, or
    /// to the greatest of the records that entered since. Whether the
    /// record was still held (its key may have been dropped since, or the
    /// record pruned).
    pub fn withdraw(&mut self, ticket: Ticket) -> bool {
        let Some(slot) = self.find_generation(ticket.hash, ticket.generation) else { return false };
        let held = &mut self.slots[slot as usize];
        let before = held.records.heap_bytes();
        if !held.records.remove(ticket.number) {
            return false;
        }
        let since = held.records.iter().filter(|record| record.number > ticket.number);
        held.latest = since.map(|record| record.time).fold(ticket.latest, i64::max);
        self.records_bytes = self.records_bytes - before + held.records.heap_bytes();
        if held.records.count() == 0 && held.turned_away.is_none() {
            self.remove(slot);
        }
        true
    }

    /// Asks the processor to fetch what observing a key of hash `hash`
    /// reads first: at [`Ahead::Index`] its index entry, at
    /// [`Ahead::Slot`] its slot (the entry fetched already), at
    /// [`Ahead::Records`] its records (the slot fetched already).
    pub(super) fn prefetch(&self, hash: u64, ahead: Ahead) {
        let slot = || self.index.get(hash).and_then(|slot| self.slots.get(slot as usize));
        match ahead {
            Ahead::Index => self.index.prefetch(hash),
            Ahead::Slot => {
                if let Some(slot) = slot() {
                    super::index::prefetch(slot);
                }
            }
            Ahead::Records => {
                if let Some(slot) = slot() {
                    slot.records.prefetch();
                }
            }
        }
    }

    pub(super) fn hash(&self, key: KeyView<'_>) -> u64 {
        self.hasher.hash_one(key) & self.hash_mask
    }

    fn slot(&self, slot: u32) -> &Slot {
        &self.slots[slot as usize]
    }

    fn slot_mut(&mut self, slot: u32) -> &mut Slot {
        &mut self.slots[slot as usize]
    }

    /// The slot holding `key`, whose hash is `hash`.
    pub(super) fn find(&self, hash: u64, key: Key<'_>) -> Option<u32> {
        let key = KeyView::from(key);
        self.find_by(hash, |slot| slot.records.key() == Some(key))
    }

    /// The slot of generation `generation`, whose key's hash is `hash`.
    fn find_generation(&self, hash: u64, generation: u64) -> Option<u32> {
        self.find_by(hash, |slot| slot.generation == generation)
    }

    fn find_by(&self, hash: u64, is: impl Fn(&Slot) -> bool) -> Option<u32> {
        let mut slot = self.index.get(hash & self.hash_mask)?;
        while slot != NO_SLOT {
            if is(self.slot(slot)) {
                return Some(slot);
            }
            slot = self.slot(slot).same_hash;
        }
        None
    }

    /// The times of the records `key` holds, in entry order (`None` when
    /// the key is not held).
    #[cfg(test)]
    pub(super) fn held_times(&self, key: Key<'_>) -> Option<Vec<i64>> {
        let slot = self.find(self.hash(KeyView::from(key)), key)?;
        Some(self.slot(slot).records.iter().map(|record| record.time).collect())
    }

    /// The heap bytes of every key's buffer, added up afresh.
    #[cfg(test)]
    pub(super) fn counted_bytes(&self) -> (usize, usize) {
        (self.records_bytes, self.slots.iter().map(|slot| slot.records.heap_bytes()).sum())
    }

    /// Holds a new key with no records yet, making room first; refused
    /// when the key alone takes more bytes than a key may.
    fn insert(&mut self, hash: u64, key: Key<'_>) -> Result<u32, Bound> {
        let view = KeyView::from(key);
        if let Some(bound) = self.limits.refuses(0, key_len(view), 0) {
            return Err(bound);
        }
        self.make_room(self.capacity);
        let records = match self.spares.pop() {
            Some(spare) => KeyRecords::reuse(spare, view, 0),
            None => KeyRecords::new(view, 0),
        };
        self.records_bytes += records.heap_bytes();
        let same_hash = self.index.get(hash).unwrap_or(NO_SLOT);
        self.generations += 1;
        let held = Slot {
            records,
            hash,
            latest: i64::MIN,
            generation: self.generations,
            entered: 0,
            turned_away: None,
            older: NO_SLOT,
            newer: NO_SLOT,
            same_hash,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                *self.slot_mut(slot) = held;
                slot
            }
            None => {
                self.slots.push(held);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(hash, slot);
        self.held += 1;
        self.link_newest(slot);
        Ok(slot)
    }

    /// Evicts the least recently entered keys until fewer than `limit` are
    /// held.
    fn make_room(&mut self, limit: usize) {
        while self.held >= limit && self.oldest != NO_SLOT {
            self.remove(self.oldest);
            self.evicted += 1;
        }
    }

    /// Evicts the least recently entered keys, the newest apart, while the
    /// keys' buffers take more than [`WindowLimits::bytes`].
    fn shed_bytes(&mut self) {
        let Some(most) = self.limits.bytes else { return };
        while self.records_bytes > most && self.oldest != self.newest {
            self.remove(self.oldest);
            self.evicted += 1;
        }
    }

    /// Enters a record into `slot`'s key (pruning what the key no longer
    /// needs first) unless it would take the key past a bound, and writes
    /// its aggregates to `out`.
    fn enter(&mut self, slot: u32, time: i64, args: &[Arg<'_>], out: &mut Vec<Aggregated>) -> Observation {
        let (bounds, limits) = (self.bounds, self.limits);
        let held = &mut self.slots[slot as usize];
        let before = held.records.heap_bytes();
        // Pruned by the latest time before this record, so that
        // withdrawing it leaves what its key needs without it.
        let latest = held.latest;
        held.records.prune(|entered| bounds.out_of_reach(entered, latest));
        if held.turned_away.is_some_and(|away| bounds.out_of_reach(away.last, latest)) {
            held.turned_away = None;
        }
        let number = held.entered;
        // A record turned away is seen: it moves its key's clock, or a key
        // at its bound would never prune and stay full for good.
        held.latest = held.latest.max(time);
        let record = record_len(number, args);
        let mut refused = limits.refuses(held.records.count(), held.records.len(), record);
        if refused.is_some() {
            // Bounds count what the key needs from now on: records this
            // one puts out of reach are pruned by the next one.
            let now = held.latest;
            let (count, len) = held.records.live(|entered| bounds.out_of_reach(entered, now));
            refused = limits.refuses(count, len, record);
        }
        let observation = match refused {
            Some(bound) => {
                held.turned_away = Some(match held.turned_away {
                    Some(away) => {
                        TurnedAway { first: away.first.min(time), last: away.last.max(time), bound }
                    }
                    None => TurnedAway { first: time, last: time, bound },
                });
                Observation::Full(bound)
            }
            None => {
                held.records.push(number, time, args);
                held.entered += 1;
                let ticket = Ticket { hash: held.hash, generation: held.generation, number, latest };
                match held.turned_away {
                    Some(away) if away.first <= time && bounds.in_window(away.last.min(time), time) => {
                        Observation::Incomplete(ticket, away.bound)
                    }
                    _ => {
                        let in_window = |entered| bounds.in_window(entered, time);
                        aggregate(&self.shape.aggregates, &held.records, in_window, out, &mut self.met);
                        Observation::Entered(ticket)
                    }
                }
            }
        };
        self.records_bytes = self.records_bytes - before + self.slots[slot as usize].records.heap_bytes();
        observation
    }

    /// Drops a key: out of the index and the recency list, its buffer
    /// freed, its slot free for the next key.
    fn remove(&mut self, slot: u32) {
        self.unlink_hash(slot);
        self.unlink_recency(slot);
        let records = std::mem::take(&mut self.slot_mut(slot).records);
        self.records_bytes -= records.heap_bytes();
        if self.spares.len() < SPARES && records.heap_bytes() <= SPARE_BYTES {
            self.spares.push(records);
        }
        self.free.push(slot);
        self.held -= 1;
    }

    fn unlink_hash(&mut self, slot: u32) {
        if !self.slot(slot).records.is_held() {
            return;
        }
        let hash = self.slot(slot).hash;
        let next = self.slot(slot).same_hash;
        let Some(first) = self.index.get(hash) else { return };
        if first == slot {
            if next == NO_SLOT {
                self.index.remove(hash);
            } else {
                self.index.insert(hash, next);
            }
            return;
        }
        let mut before = first;
        while before != NO_SLOT && self.slot(before).same_hash != slot {
            before = self.slot(before).same_hash;
        }
        if before != NO_SLOT {
            self.slot_mut(before).same_hash = next;
        }
    }

    fn mark_newest(&mut self, slot: u32) {
        if self.newest != slot {
            self.unlink_recency(slot);
            self.link_newest(slot);
        }
    }

    fn link_newest(&mut self, slot: u32) {
        let newest = self.newest;
        let held = self.slot_mut(slot);
        held.older = newest;
        held.newer = NO_SLOT;
        match newest {
            NO_SLOT => self.oldest = slot,
            newest => self.slot_mut(newest).newer = slot,
        }
        self.newest = slot;
    }

    fn unlink_recency(&mut self, slot: u32) {
        let Slot { older, newer, .. } = *self.slot(slot);
        match older {
            NO_SLOT => self.oldest = newer,
            older => self.slot_mut(older).newer = newer,
        }
        match newer {
            NO_SLOT => self.newest = older,
            newer => self.slot_mut(newer).older = older,
        }
    }
}

impl fmt::Debug for WindowStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowStore")
            .field("shape", &self.shape)
            .field("limits", &self.limits)
            .field("keys", &self.held)
            .field("evicted", &self.evicted)
            .field("full", &self.full)
            .finish_non_exhaustive()
    }
}

/// How far ahead of its use a key's data is fetched into the cache
/// (`Entering::prefetch`): each stage reads what the one before fetched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ahead {
    Index,
    Slot,
    Records,
}

#[cfg(test)]
mod tests;
