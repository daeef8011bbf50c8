//! The window state store: per key, the records a sliding event-time
//! window still needs, and each entering record's aggregates over its
//! window ([`WindowStore`]; [`SharedWindowStore`] for many threads).
//!
//! Per key the store keeps its latest time and its records (one buffer,
//! [`KeyRecords`]); an index from the key's hash to its slot; and one
//! recency list of the keys, least recently entered first. Observing a
//! record costs a lookup, a pass over its key's records and amortised O(1)
//! for the rest:
//!
//! - a key's records that no later record can see (time at or below
//!   `latest - span - grace`) are pruned when the key is touched;
//! - a key is *forgotten* once the watermark (the greatest time entered
//!   into the store) reaches `latest + span + grace`: no record that is not
//!   late against the watermark can see any of its records. A touched key
//!   is checked first, so the rule holds exactly; memory comes back by the
//!   sweep after each record, which drops the least recently entered keys
//!   while they are forgotten. Each key held was entered while the
//!   watermark was within `span + grace` of where it is now;
//! - past `max_keys` the least recently entered key is evicted.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::mem::size_of;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::aggregate::{Met, aggregate};
use super::bounds::Bounds;
use super::index::HashIndex;
use super::records::{KeyRecords, KeyView, allocation_bytes, record_len};
use super::shape::{Aggregated, Arg, Key, ShapeError, WindowShape};

/// What became of an observed record.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Observation {
    /// The record entered its key's window; `out` holds its aggregates.
    Entered,
    /// The record is late (`time < latest(key) - grace`): it did not enter
    /// and changed nothing; `out` is empty.
    Late,
    /// The arguments do not fit the window's shape (a caller's bug): the
    /// record did not enter, and `out` holds, for each aggregate, the
    /// internal error that says which argument does not fit.
    Refused,
}

/// No slot: the end of a list.
const NO_SLOT: u32 = u32::MAX;

/// The most keys a store holds: slots are numbered by `u32`, [`NO_SLOT`]
/// excluded.
const MAX_SLOTS: usize = (u32::MAX - 1) as usize;

/// How many dropped keys' buffers a store keeps for new keys: a stream
/// whose keys come and go (each forgotten before it comes again) then
/// allocates and frees nothing per record.
const SPARES: usize = 64;

/// The largest buffer kept for reuse, in bytes.
const SPARE_BYTES: usize = 256;

/// One held key.
#[derive(Debug)]
struct Slot {
    records: KeyRecords,
    /// The key's hash, so that dropping the key reads neither the key nor
    /// the hasher.
    hash: u64,
    /// The greatest time entered for the key.
    latest: i64,
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
    /// The most keys held (at least one).
    capacity: usize,
    hasher: RandomState,
    /// The bits of a key's hash the index keys by: all of them, but for
    /// tests that make keys collide.
    hash_mask: u64,
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
    /// The greatest time entered into the store.
    watermark: Option<i64>,
    evicted: u64,
    expired: u64,
    /// The heap bytes of all the keys' buffers.
    records_bytes: usize,
    /// The buffers of dropped keys, for the next keys to reuse: at most
    /// [`SPARES`] of at most [`SPARE_BYTES`] each.
    spares: Vec<KeyRecords>,
    /// Scratch for `distinct`.
    met: Vec<Met>,
}

impl WindowStore {
    /// A store for a window of `shape`, holding at most `max_keys` keys
    /// (`None`: no bound; `Some(0)` holds one). Fails when the store cannot
    /// keep the shape ([`WindowShape::check`]).
    pub fn new(shape: WindowShape, max_keys: Option<usize>) -> Result<WindowStore, ShapeError> {
        WindowStore::with_hasher(shape, max_keys, RandomState::new())
    }

    fn with_hasher(
        shape: WindowShape,
        max_keys: Option<usize>,
        hasher: RandomState,
    ) -> Result<WindowStore, ShapeError> {
        shape.check()?;
        Ok(WindowStore {
            bounds: Bounds::new(shape.span, shape.grace),
            shape,
            capacity: max_keys.unwrap_or(MAX_SLOTS).clamp(1, MAX_SLOTS),
            hasher,
            hash_mask: u64::MAX,
            index: HashIndex::default(),
            slots: Vec::new(),
            free: Vec::new(),
            oldest: NO_SLOT,
            newest: NO_SLOT,
            held: 0,
            watermark: None,
            evicted: 0,
            expired: 0,
            records_bytes: 0,
            spares: Vec::new(),
            met: Vec::new(),
        })
    }

    /// Enters one record of `key` at `time` with one argument per aggregate
    /// (unless it is late) and writes its aggregates over its window to
    /// `out` (cleared first; one per aggregate, in order).
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

    /// The keys dropped because the store held `max_keys`.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The keys dropped because the watermark passed them (a record that
    /// came and was forgotten at once included).
    pub fn expired(&self) -> u64 {
        self.expired
    }

    /// The greatest time entered into the store.
    pub fn watermark(&self) -> Option<i64> {
        self.watermark
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

    fn observe_hashed(
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
        let found = match self.find(hash, key) {
            Some(slot) if self.is_forgotten(slot) => {
                self.drop_expired(slot);
                None
            }
            found => found,
        };
        if let Some(slot) = found
            && self.bounds.is_late(time, self.slot(slot).latest)
        {
            return Observation::Late;
        }
        let slot = found.unwrap_or_else(|| self.insert(hash, key, time, args));
        self.enter(slot, time, args, out);
        self.watermark = Some(self.watermark.map_or(time, |watermark| watermark.max(time)));
        if self.is_forgotten(slot) {
            self.drop_expired(slot);
        } else {
            self.mark_newest(slot);
        }
        self.sweep();
        Observation::Entered
    }

    /// Asks the processor to fetch what observing a key of hash `hash`
    /// reads first: at [`Ahead::Index`] its index entry, at
    /// [`Ahead::Slot`] its slot (the entry fetched already), at
    /// [`Ahead::Records`] its records (the slot fetched already).
    fn prefetch(&self, hash: u64, ahead: Ahead) {
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

    /// Raises the watermark to `watermark` (the shared store's, which other
    /// shards may have raised).
    fn raise_watermark(&mut self, watermark: i64) {
        self.watermark = Some(self.watermark.map_or(watermark, |own| own.max(watermark)));
    }

    fn hash(&self, key: KeyView<'_>) -> u64 {
        self.hasher.hash_one(key) & self.hash_mask
    }

    fn slot(&self, slot: u32) -> &Slot {
        &self.slots[slot as usize]
    }

    fn slot_mut(&mut self, slot: u32) -> &mut Slot {
        &mut self.slots[slot as usize]
    }

    /// The slot holding `key`, whose hash is `hash`.
    fn find(&self, hash: u64, key: Key<'_>) -> Option<u32> {
        let key = KeyView::from(key);
        let mut slot = self.index.get(hash)?;
        while slot != NO_SLOT {
            if self.slot(slot).records.key() == Some(key) {
                return Some(slot);
            }
            slot = self.slot(slot).same_hash;
        }
        None
    }

    /// Whether the watermark has passed the key of `slot`.
    fn is_forgotten(&self, slot: u32) -> bool {
        self.watermark.is_some_and(|watermark| self.bounds.out_of_reach(self.slot(slot).latest, watermark))
    }

    /// Holds a new key, whose first record is at `time` with `args`,
    /// making room first unless the record is forgotten as it enters.
    fn insert(&mut self, hash: u64, key: Key<'_>, time: i64, args: &[Arg<'_>]) -> u32 {
        let forgotten_at_once =
            self.watermark.is_some_and(|watermark| self.bounds.out_of_reach(time, watermark));
        self.make_room(if forgotten_at_once { MAX_SLOTS } else { self.capacity });
        let records = match self.spares.pop() {
            Some(spare) => KeyRecords::reuse(spare, key.into(), record_len(args)),
            None => KeyRecords::new(key.into(), record_len(args)),
        };
        self.records_bytes += records.heap_bytes();
        let same_hash = self.index.get(hash).unwrap_or(NO_SLOT);
        let held = Slot { records, hash, latest: time, older: NO_SLOT, newer: NO_SLOT, same_hash };
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
        slot
    }

    /// Evicts the least recently entered keys until fewer than `limit` are
    /// held.
    fn make_room(&mut self, limit: usize) {
        while self.held >= limit && self.oldest != NO_SLOT {
            self.remove(self.oldest);
            self.evicted += 1;
        }
    }

    /// Enters a record into `slot`'s key (pruning what the key no longer
    /// needs) and writes its aggregates to `out`.
    fn enter(&mut self, slot: u32, time: i64, args: &[Arg<'_>], out: &mut Vec<Aggregated>) {
        let bounds = self.bounds;
        let held = &mut self.slots[slot as usize];
        held.latest = held.latest.max(time);
        let latest = held.latest;
        let before = held.records.heap_bytes();
        held.records.prune(|entered| bounds.out_of_reach(entered, latest));
        held.records.push(time, args);
        self.records_bytes = self.records_bytes - before + held.records.heap_bytes();
        let in_window = |entered| bounds.in_window(entered, time);
        aggregate(&self.shape.aggregates, &held.records, in_window, out, &mut self.met);
    }

    /// Drops the least recently entered keys while the watermark has
    /// passed them.
    fn sweep(&mut self) {
        while self.oldest != NO_SLOT && self.is_forgotten(self.oldest) {
            self.drop_expired(self.oldest);
        }
    }

    fn drop_expired(&mut self, slot: u32) {
        self.remove(slot);
        self.expired += 1;
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
            .field("keys", &self.held)
            .field("watermark", &self.watermark)
            .field("evicted", &self.evicted)
            .field("expired", &self.expired)
            .finish_non_exhaustive()
    }
}

/// The most shards of a [`SharedWindowStore`].
const SHARDS: usize = 64;

/// A [`WindowStore`] for many threads (the server): shards of
/// `Mutex<WindowStore>` chosen by the key's hash, so one key's observe is
/// atomic and two keys rarely contend. `max_keys` is split over the shards,
/// each evicting its own least recently entered key; the watermark is
/// shared, so a record sees the watermark of every record whose observe
/// returned before it began.
pub struct SharedWindowStore {
    hasher: RandomState,
    shards: Box<[Mutex<WindowStore>]>,
    /// The greatest time entered into any shard (`i64::MIN` before any:
    /// raising a shard's watermark to it changes nothing).
    watermark: AtomicI64,
}

impl SharedWindowStore {
    /// As [`WindowStore::new`], in 64 shards; with `max_keys` below 64, in
    /// `max_keys` shards of one key each.
    pub fn new(shape: WindowShape, max_keys: Option<usize>) -> Result<SharedWindowStore, ShapeError> {
        let count = max_keys.map_or(SHARDS, |max_keys| max_keys.clamp(1, SHARDS));
        let hasher = RandomState::new();
        let share =
            |shard: usize| max_keys.map(|max_keys| max_keys / count + usize::from(shard < max_keys % count));
        let shards = (0..count)
            .map(|shard| {
                WindowStore::with_hasher(shape.clone(), share(shard), hasher.clone()).map(Mutex::new)
            })
            .collect::<Result<_, _>>()?;
        Ok(SharedWindowStore { hasher, shards, watermark: AtomicI64::new(i64::MIN) })
    }

    /// As [`WindowStore::observe`], under the lock of the key's shard.
    pub fn observe(
        &self,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        self.observe_hashed(self.hash(key), key, time, args, out)
    }

    /// `key`'s hash in this store, for [`SharedWindowStore::observe_hashed`]
    /// (computed ahead, where it may run in parallel).
    pub fn hash(&self, key: Key<'_>) -> u64 {
        self.hasher.hash_one(KeyView::from(key))
    }

    /// [`SharedWindowStore::observe`] of a key whose hash is `hash`
    /// ([`SharedWindowStore::hash`]).
    pub fn observe_hashed(
        &self,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        let mut store = self.shards[self.shard_of(hash)].lock().unwrap_or_else(PoisonError::into_inner);
        self.observe_in(&mut store, hash, key, time, args, out)
    }

    /// [`SharedWindowStore::observe_hashed`] in the key's shard `store`,
    /// locked.
    fn observe_in(
        &self,
        store: &mut WindowStore,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        store.raise_watermark(self.watermark.load(Ordering::Relaxed));
        let observation = store.observe_hashed(hash, key, time, args, out);
        if let Some(watermark) = store.watermark {
            self.watermark.fetch_max(watermark, Ordering::Relaxed);
        }
        observation
    }

    /// The store locked for records entered one after the other
    /// ([`Entering`]).
    pub fn entering(&self) -> Entering<'_> {
        let shards =
            self.shards.iter().map(|shard| shard.lock().unwrap_or_else(PoisonError::into_inner)).collect();
        Entering { store: self, shards }
    }

    fn shard_of(&self, hash: u64) -> usize {
        ((u128::from(hash) * self.shards.len() as u128) >> 64) as usize
    }

    /// The keys held, over all shards.
    pub fn keys(&self) -> usize {
        self.sum(WindowStore::keys)
    }

    /// The keys dropped because a shard held its share of `max_keys`.
    pub fn evicted(&self) -> u64 {
        self.sum(WindowStore::evicted)
    }

    /// The keys dropped because the watermark passed them.
    pub fn expired(&self) -> u64 {
        self.sum(WindowStore::expired)
    }

    /// The heap bytes held, over all shards.
    pub fn heap_bytes(&self) -> usize {
        allocation_bytes(self.shards.len() * size_of::<Mutex<WindowStore>>())
            + self.sum(WindowStore::heap_bytes)
    }

    fn sum<N: std::iter::Sum<N>>(&self, of: impl Fn(&WindowStore) -> N) -> N {
        self.shards.iter().map(|shard| of(&shard.lock().unwrap_or_else(PoisonError::into_inner))).sum()
    }
}

/// How far ahead of its use [`Entering::prefetch`] fetches a key's data:
/// each stage reads what the one before fetched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ahead {
    Index,
    Slot,
    Records,
}

/// A [`SharedWindowStore`] with every shard locked, for a run of records
/// entered one after the other (a batch's chunk): no lock per record, and
/// the keys of the records to come can be fetched into the cache while
/// the ones before are entered ([`Entering::prefetch`]), so that their
/// cache misses overlap. Single requests of other threads wait until it
/// is dropped.
pub struct Entering<'s> {
    store: &'s SharedWindowStore,
    shards: Vec<std::sync::MutexGuard<'s, WindowStore>>,
}

impl Entering<'_> {
    /// As [`SharedWindowStore::hash`].
    pub fn hash(&self, key: Key<'_>) -> u64 {
        self.store.hash(key)
    }

    /// As [`SharedWindowStore::observe_hashed`].
    pub fn observe_hashed(
        &mut self,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        let store = &mut self.shards[self.store.shard_of(hash)];
        self.store.observe_in(store, hash, key, time, args, out)
    }

    /// Fetches stage `ahead` of a key of hash `hash` into the cache: a
    /// hint, which changes nothing.
    pub fn prefetch(&self, hash: u64, ahead: Ahead) {
        self.shards[self.store.shard_of(hash)].prefetch(hash, ahead);
    }
}

impl fmt::Debug for Entering<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entering").field("shards", &self.shards.len()).finish_non_exhaustive()
    }
}

impl fmt::Debug for SharedWindowStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedWindowStore")
            .field("shards", &self.shards.len())
            .field("keys", &self.keys())
            .field("watermark", &self.watermark.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;
    use std::sync::Arc;
    use std::thread;

    use ir::AggregateKind::{self, Count, Distinct, Max, Min, Sum};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};
    use rust_decimal::Decimal;

    use super::*;
    use crate::error::EvalError;
    use crate::semantics::{decimal, ops};
    use crate::window::ArgKind::{self, Bool, Duration, Float, Int, Str, Timestamp};

    const COUNT: (AggregateKind, ArgKind) = (Count, ArgKind::None);
    const NONE: Arg<'static> = Arg::None;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    fn dec(text: &str) -> Arg<'static> {
        Arg::Decimal(d(text))
    }

    fn shape(span: i64, grace: i64, aggregates: &[(AggregateKind, ArgKind)]) -> WindowShape {
        WindowShape { span, grace, aggregates: aggregates.to_vec() }
    }

    /// An aggregate as the cases write it: `3`, `1.50d`, `0.5f`, `error: ...`.
    fn render(aggregated: &Aggregated) -> String {
        match aggregated {
            Aggregated::Int(int) => int.to_string(),
            Aggregated::Decimal(decimal) => format!("{decimal}d"),
            Aggregated::Float(float) => format!("{float:?}f"),
            Aggregated::Failed(error) => format!("error: {error}"),
        }
    }

    /// An observation as the cases write it: `late`, `refused`, or the
    /// aggregates joined by ` | `.
    fn shown(observation: Observation, out: &[Aggregated]) -> String {
        match observation {
            Observation::Late => {
                assert!(out.is_empty(), "a late record's out is empty: {out:?}");
                "late".to_string()
            }
            Observation::Refused => {
                let internal = |a: &Aggregated| matches!(a, Aggregated::Failed(EvalError::Argument(m)) if m.starts_with("internal: "));
                assert!(out.iter().all(internal), "a refused record's out: {out:?}");
                "refused".to_string()
            }
            Observation::Entered => out.iter().map(render).collect::<Vec<_>>().join(" | "),
        }
    }

    struct Step {
        key: Key<'static>,
        time: i64,
        args: Vec<Arg<'static>>,
        expect: &'static str,
    }

    fn at(key: impl Into<Key<'static>>, time: i64, args: &[Arg<'static>], expect: &'static str) -> Step {
        Step { key: key.into(), time, args: args.to_vec(), expect }
    }

    struct Case {
        name: &'static str,
        shape: WindowShape,
        max_keys: Option<usize>,
        steps: Vec<Step>,
        /// Keys held, evicted and expired after the last step.
        end: (usize, u64, u64),
    }

    fn case(name: &'static str, shape: WindowShape, steps: Vec<Step>, end: (usize, u64, u64)) -> Case {
        Case { name, shape, max_keys: None, steps, end }
    }

    fn bounded(max_keys: usize, case: Case) -> Case {
        Case { max_keys: Some(max_keys), ..case }
    }

    fn cases() -> Vec<Case> {
        let big = Arg::Int(i64::MAX);
        vec![
            case(
                "the window is (t - span, t]: t - span is out, t - span + 1 in",
                shape(10, 0, &[COUNT, (Min, Timestamp)]),
                vec![
                    at("a", 0, &[NONE, Arg::Int(0)], "1 | 0"),
                    at("a", 9, &[NONE, Arg::Int(9)], "2 | 0"),
                    at("a", 10, &[NONE, Arg::Int(10)], "2 | 9"),
                    at("a", 19, &[NONE, Arg::Int(19)], "2 | 10"),
                    at("a", 19, &[NONE, Arg::Int(19)], "3 | 10"),
                ],
                (1, 0, 0),
            ),
            case(
                "a record out of order within grace sees its own span only, not later records",
                shape(10, 5, &[COUNT, (Sum, Int), (Max, Timestamp)]),
                vec![
                    at("a", 20, &[NONE, Arg::Int(1), Arg::Int(20)], "1 | 1 | 20"),
                    at("a", 16, &[NONE, Arg::Int(2), Arg::Int(16)], "1 | 2 | 16"),
                    at("a", 15, &[NONE, Arg::Int(4), Arg::Int(15)], "1 | 4 | 15"),
                    at("a", 14, &[NONE, Arg::Int(8), Arg::Int(14)], "late"),
                    at("a", 25, &[NONE, Arg::Int(16), Arg::Int(25)], "3 | 19 | 25"),
                    at("a", 21, &[NONE, Arg::Int(32), Arg::Int(21)], "4 | 39 | 21"),
                ],
                (1, 0, 0),
            ),
            case(
                "a late record does not enter and changes nothing",
                shape(10, 2, &[COUNT, (Sum, Int)]),
                vec![
                    at("a", 100, &[NONE, Arg::Int(1)], "1 | 1"),
                    at("a", 97, &[NONE, Arg::Int(1000)], "late"),
                    at("a", 98, &[NONE, Arg::Int(2)], "1 | 2"),
                    at("a", 101, &[NONE, Arg::Int(4)], "3 | 7"),
                    at("b", 100, &[NONE, Arg::Int(8)], "1 | 8"),
                ],
                (2, 0, 0),
            ),
            case(
                "grace 0: behind latest is late, at latest is not",
                shape(5, 0, &[COUNT]),
                vec![
                    at("a", 10, &[NONE], "1"),
                    at("a", 9, &[NONE], "late"),
                    at("a", 10, &[NONE], "2"),
                    at("a", 11, &[NONE], "3"),
                ],
                (1, 0, 0),
            ),
            case(
                "an int sum that overflows anywhere in entry order fails for its record only",
                shape(10, 0, &[COUNT, (Sum, Int)]),
                vec![
                    at("a", 1, &[NONE, big], "1 | 9223372036854775807"),
                    at("a", 2, &[NONE, Arg::Int(1)], "2 | error: int overflow"),
                    at("a", 3, &[NONE, Arg::Int(-1)], "3 | error: int overflow"),
                    at("a", 11, &[NONE, Arg::Int(5)], "3 | 5"),
                    at("a", 12, &[NONE, Arg::Int(i64::MIN)], "3 | -9223372036854775804"),
                ],
                (1, 0, 0),
            ),
            case(
                "a decimal sum that overflows fails, and recovers once the big one leaves the span",
                shape(10, 0, &[COUNT, (Sum, ArgKind::Decimal)]),
                vec![
                    at("a", 1, &[NONE, Arg::Decimal(Decimal::MAX)], "1 | 79228162514264337593543950335d"),
                    at("a", 2, &[NONE, dec("1")], "2 | error: decimal overflow"),
                    at("a", 11, &[NONE, dec("0.50")], "2 | 1.50d"),
                ],
                (1, 0, 0),
            ),
            case(
                "a float sum adds in entry order and fails when not finite",
                shape(10, 0, &[(Sum, Float)]),
                vec![
                    at("a", 1, &[Arg::Float(1e308)], "1e308f"),
                    at("a", 2, &[Arg::Float(1e308)], "error: float sum is not a finite number"),
                    at("a", 11, &[Arg::Float(0.1)], "1e308f"),
                    at("a", 12, &[Arg::Float(0.2)], "0.30000000000000004f"),
                ],
                (1, 0, 0),
            ),
            case(
                "a sum of durations overflows as a duration",
                shape(10, 0, &[(Sum, Duration)]),
                vec![
                    at("a", 0, &[big], "9223372036854775807"),
                    at("a", 1, &[Arg::Int(1)], "error: duration overflow"),
                ],
                (1, 0, 0),
            ),
            case(
                "max and min keep the first entered of equal values",
                shape(10, 0, &[(Max, ArgKind::Decimal), (Min, ArgKind::Decimal), (Max, Float), (Min, Float)]),
                vec![
                    at(
                        "a",
                        0,
                        &[dec("1.0"), dec("1.00"), Arg::Float(0.0), Arg::Float(-0.0)],
                        "1.0d | 1.00d | 0.0f | -0.0f",
                    ),
                    at(
                        "a",
                        1,
                        &[dec("1.00"), dec("1.0"), Arg::Float(-0.0), Arg::Float(0.0)],
                        "1.0d | 1.00d | 0.0f | -0.0f",
                    ),
                    at(
                        "a",
                        2,
                        &[dec("2"), dec("0.5"), Arg::Float(1.5), Arg::Float(-1.5)],
                        "2d | 0.5d | 1.5f | -1.5f",
                    ),
                    at(
                        "a",
                        3,
                        &[dec("2.00"), dec("0.50"), Arg::Float(1.5), Arg::Float(-1.5)],
                        "2d | 0.5d | 1.5f | -1.5f",
                    ),
                    at(
                        "a",
                        11,
                        &[dec("-1"), dec("-1"), Arg::Float(-1.0), Arg::Float(-1.0)],
                        "2d | -1d | 1.5f | -1.5f",
                    ),
                ],
                (1, 0, 0),
            ),
            case(
                "distinct counts strings byte for byte, ints and bools",
                shape(100, 0, &[(Distinct, Str), (Distinct, Int), (Distinct, Bool)]),
                vec![
                    at("a", 0, &[Arg::Str("DE"), Arg::Int(1), Arg::Bool(true)], "1 | 1 | 1"),
                    at("a", 1, &[Arg::Str("FR"), Arg::Int(1), Arg::Bool(true)], "2 | 1 | 1"),
                    at("a", 2, &[Arg::Str("DE"), Arg::Int(-1), Arg::Bool(false)], "2 | 2 | 2"),
                    at("a", 3, &[Arg::Str(""), Arg::Int(2), Arg::Bool(true)], "3 | 3 | 2"),
                    at("a", 4, &[Arg::Str("de"), Arg::Int(1), Arg::Bool(false)], "4 | 3 | 2"),
                    at("a", 5, &[Arg::Str("é"), Arg::Int(2), Arg::Bool(true)], "5 | 3 | 2"),
                    at("a", 6, &[Arg::Str("e\u{301}"), Arg::Int(3), Arg::Bool(true)], "6 | 4 | 2"),
                    at("a", 7, &[Arg::Str("D"), Arg::Int(i64::MIN), Arg::Bool(true)], "7 | 5 | 2"),
                ],
                (1, 0, 0),
            ),
            case(
                "distinct counts the window only",
                shape(2, 0, &[(Distinct, Str)]),
                vec![
                    at("a", 0, &[Arg::Str("x")], "1"),
                    at("a", 1, &[Arg::Str("x")], "1"),
                    at("a", 2, &[Arg::Str("y")], "2"),
                    at("a", 3, &[Arg::Str("x")], "2"),
                    at("a", 4, &[Arg::Str("x")], "1"),
                ],
                (1, 0, 0),
            ),
            case(
                "every aggregate at once; the int key 1 and the string key \"1\" are two keys",
                shape(10, 0, &[COUNT, (Sum, ArgKind::Decimal), (Distinct, Str), (Max, Int), (Min, Duration)]),
                vec![
                    at(
                        1,
                        0,
                        &[NONE, dec("10.00"), Arg::Str("DE"), Arg::Int(5), Arg::Int(7)],
                        "1 | 10.00d | 1 | 5 | 7",
                    ),
                    at(
                        "1",
                        0,
                        &[NONE, dec("1"), Arg::Str("FR"), Arg::Int(3), Arg::Int(3)],
                        "1 | 1d | 1 | 3 | 3",
                    ),
                    at(
                        1,
                        5,
                        &[NONE, dec("0.5"), Arg::Str("FR"), Arg::Int(4), Arg::Int(9)],
                        "2 | 10.50d | 2 | 5 | 7",
                    ),
                ],
                (2, 0, 0),
            ),
            case(
                "a key is forgotten once the watermark reaches latest + span + grace",
                shape(10, 5, &[COUNT]),
                vec![
                    at("a", 0, &[NONE], "1"),
                    at("b", 14, &[NONE], "1"),
                    // 0 + 15 > 14: a is still whole.
                    at("a", 0, &[NONE], "2"),
                    // 0 + 15 <= 15: a is forgotten, but b is older in the
                    // recency list and is not, so the sweep stops at b and
                    // a is still held.
                    at("c", 15, &[NONE], "1"),
                    // Touched, a is found forgotten. Forever it would count
                    // 3; this record is late against the watermark (1 < 15
                    // - 5), so it meets a fresh key.
                    at("a", 1, &[NONE], "1"),
                    // d is forgotten as it enters: counted, not held.
                    at("d", 0, &[NONE], "1"),
                    // The sweep drops c (15 + 15 <= 31) and a (1 + 15 <=
                    // 31), the least recently entered once b is the newest;
                    // b's 14 is out of (21, 31].
                    at("b", 31, &[NONE], "1"),
                ],
                (1, 0, 4),
            ),
            bounded(
                2,
                case(
                    "past max_keys the least recently entered key is evicted",
                    shape(100, 100, &[COUNT]),
                    vec![
                        at("a", 0, &[NONE], "1"),
                        at("b", 0, &[NONE], "1"),
                        at("a", 1, &[NONE], "2"),
                        at("c", 1, &[NONE], "1"),
                        at("a", 2, &[NONE], "3"),
                        at("b", 2, &[NONE], "1"),
                        at("a", 3, &[NONE], "4"),
                    ],
                    (2, 2, 0),
                ),
            ),
            bounded(
                2,
                case(
                    "a late record does not make its key recent",
                    shape(100, 0, &[COUNT]),
                    vec![
                        at("a", 10, &[NONE], "1"),
                        at("b", 10, &[NONE], "1"),
                        at("a", 5, &[NONE], "late"),
                        at("c", 10, &[NONE], "1"),
                        at("b", 10, &[NONE], "2"),
                        at("a", 10, &[NONE], "1"),
                    ],
                    (2, 2, 0),
                ),
            ),
            bounded(
                0,
                case(
                    "max_keys 0 holds one key",
                    shape(100, 0, &[COUNT]),
                    vec![
                        at("a", 0, &[NONE], "1"),
                        at("a", 1, &[NONE], "2"),
                        at("b", 1, &[NONE], "1"),
                        at("a", 2, &[NONE], "1"),
                    ],
                    (1, 2, 0),
                ),
            ),
            case(
                "times, span and grace at i64's extremes",
                shape(i64::MAX, i64::MAX, &[COUNT, (Min, Timestamp), (Max, Timestamp)]),
                vec![
                    at(
                        "a",
                        i64::MIN,
                        &[NONE, Arg::Int(i64::MIN), Arg::Int(i64::MIN)],
                        "1 | -9223372036854775808 | -9223372036854775808",
                    ),
                    at(
                        "a",
                        i64::MAX,
                        &[NONE, Arg::Int(i64::MAX), Arg::Int(i64::MAX)],
                        "1 | 9223372036854775807 | 9223372036854775807",
                    ),
                    at("a", 0, &[NONE, Arg::Int(0), Arg::Int(0)], "1 | 0 | 0"),
                    at("a", 1, &[NONE, Arg::Int(1), Arg::Int(1)], "2 | 0 | 1"),
                    at("a", -1, &[NONE, Arg::Int(-1), Arg::Int(-1)], "late"),
                    at(
                        "b",
                        i64::MIN,
                        &[NONE, Arg::Int(i64::MIN), Arg::Int(i64::MIN)],
                        "1 | -9223372036854775808 | -9223372036854775808",
                    ),
                ],
                (1, 0, 1),
            ),
            case(
                "the narrowest window at i64's extremes",
                shape(1, 0, &[COUNT]),
                vec![
                    at("a", i64::MIN, &[NONE], "1"),
                    at("a", i64::MIN, &[NONE], "2"),
                    at("a", i64::MIN + 1, &[NONE], "1"),
                    at("b", i64::MAX, &[NONE], "1"),
                    at("b", i64::MAX, &[NONE], "2"),
                ],
                (1, 0, 1),
            ),
            case(
                "arguments that do not fit the shape are refused and change nothing",
                shape(10, 0, &[COUNT, (Sum, Int)]),
                vec![
                    at("a", 0, &[NONE], "refused"),
                    at("a", 0, &[NONE, dec("1")], "refused"),
                    at("a", 0, &[Arg::Int(1), Arg::Int(1)], "refused"),
                    at("a", 0, &[NONE, Arg::Int(1), NONE], "refused"),
                    at("a", 0, &[NONE, Arg::Int(1)], "1 | 1"),
                ],
                (1, 0, 0),
            ),
        ]
    }

    /// Runs a case on a [`WindowStore`], and on a [`SharedWindowStore`]
    /// when it has no key bound (a bound is split over shards).
    fn check(case: &Case) {
        let name = case.name;
        let mut store =
            WindowStore::new(case.shape.clone(), case.max_keys).unwrap_or_else(|e| panic!("{name}: {e}"));
        let shared = SharedWindowStore::new(case.shape.clone(), case.max_keys).unwrap();
        let mut out = vec![Aggregated::Int(-1)];
        for (i, step) in case.steps.iter().enumerate() {
            let observation = store.observe(step.key, step.time, &step.args, &mut out);
            let what = format!("{name}: step {i} ({:?} at {})", step.key, step.time);
            assert_eq!(shown(observation, &out), step.expect, "{what}");
            if case.max_keys.is_none() {
                let observation = shared.observe(step.key, step.time, &step.args, &mut out);
                assert_eq!(shown(observation, &out), step.expect, "{what}, shared");
            }
        }
        assert_eq!(
            (store.keys(), store.evicted(), store.expired()),
            case.end,
            "{name}: keys, evicted, expired"
        );
    }

    #[test]
    fn window_cases() {
        for case in cases() {
            check(&case);
        }
    }

    #[test]
    fn shapes_the_store_cannot_keep_are_refused() {
        let refused = [
            (shape(0, 0, &[COUNT]), "a window's span must be positive, not 0ns"),
            (shape(i64::MIN, 0, &[COUNT]), "a window's span must be positive, not -9223372036854775808ns"),
            (shape(1, -1, &[COUNT]), "a window's grace must be zero or more, not -1ns"),
            (shape(1, 0, &[(Count, Int)]), "aggregate 0 (count) cannot take an int"),
            (shape(1, 0, &[COUNT, (Sum, Str)]), "aggregate 1 (sum) cannot take a string"),
            (shape(1, 0, &[(Sum, Timestamp)]), "aggregate 0 (sum) cannot take a timestamp"),
            (shape(1, 0, &[(Sum, Bool)]), "aggregate 0 (sum) cannot take a bool"),
            (shape(1, 0, &[(Max, Str)]), "aggregate 0 (max) cannot take a string"),
            (shape(1, 0, &[(Min, Bool)]), "aggregate 0 (min) cannot take a bool"),
            (shape(1, 0, &[(Min, ArgKind::None)]), "aggregate 0 (min) cannot take no argument"),
            (shape(1, 0, &[(Distinct, ArgKind::Decimal)]), "aggregate 0 (distinct) cannot take a decimal"),
            (shape(1, 0, &[(Distinct, Float)]), "aggregate 0 (distinct) cannot take a float"),
            (shape(1, 0, &[(Distinct, Timestamp)]), "aggregate 0 (distinct) cannot take a timestamp"),
        ];
        for (shape, message) in refused {
            assert_eq!(WindowStore::new(shape.clone(), None).unwrap_err().to_string(), message);
            assert_eq!(SharedWindowStore::new(shape, Some(3)).unwrap_err().to_string(), message);
        }
        assert!(WindowStore::new(shape(1, 0, &[]), None).is_ok(), "a window of no aggregates is kept");
    }

    #[test]
    fn keys_and_strings_of_any_length() {
        let long = "k".repeat(1 << 20);
        let longer = format!("{long}!");
        let mut store = WindowStore::new(shape(10, 0, &[COUNT, (Distinct, Str)]), None).unwrap();
        let mut out = Vec::new();
        for (key, text, expect) in [
            (&long, &longer, "1 | 1"),
            (&longer, &long, "1 | 1"),
            (&long, &long, "2 | 2"),
            (&long, &longer, "3 | 2"),
        ] {
            let observation = store.observe(Key::Str(key), 0, &[NONE, Arg::Str(text)], &mut out);
            assert_eq!(shown(observation, &out), expect);
        }
        assert_eq!(store.keys(), 2);
        assert!(store.heap_bytes() > 5 << 20, "four 1 MiB strings and two 1 MiB keys are held");
    }

    #[test]
    fn forgotten_keys_give_their_memory_back() {
        let mut store = WindowStore::new(shape(10, 0, &[COUNT, (Distinct, Str)]), None).unwrap();
        let mut out = Vec::new();
        let text = "t".repeat(1000);
        for i in 0..1000 {
            store.observe(Key::Int(i), 0, &[NONE, Arg::Str(&text)], &mut out);
        }
        let full = store.heap_bytes();
        assert!(full > 1000 * 1000, "{full}");
        store.observe(Key::Int(-1), 10, &[NONE, Arg::Str("")], &mut out);
        assert_eq!((store.keys(), store.expired()), (1, 1000));
        assert!(store.heap_bytes() < full - 1000 * 1000, "{} of {full}", store.heap_bytes());
    }

    /// The keys of the random sequences: `Int(2)` and `Str("2")` differ.
    const KEYS: [Key<'static>; 4] = [Key::Str("k0"), Key::Str("k1"), Key::Int(2), Key::Str("2")];

    /// Every aggregate with every kind of argument it takes.
    fn every_aggregate() -> Vec<(AggregateKind, ArgKind)> {
        let kinds = [ArgKind::None, Int, ArgKind::Decimal, Float, Timestamp, Duration, Str, Bool];
        AggregateKind::ALL
            .into_iter()
            .flat_map(|aggregate| {
                kinds.into_iter().filter(move |kind| kind.suits(aggregate)).map(move |kind| (aggregate, kind))
            })
            .collect()
    }

    /// One record of a random sequence: which key, how far the stream's
    /// clock moves before it, and values its arguments are made of.
    #[derive(Clone, Debug)]
    struct Event {
        key: usize,
        step: i64,
        int: i64,
        decimal: Decimal,
        float: f64,
        text: &'static str,
        flag: bool,
    }

    impl Event {
        fn args(&self, time: i64, aggregates: &[(AggregateKind, ArgKind)]) -> Vec<Arg<'static>> {
            let arg = |kind| match kind {
                ArgKind::None => Arg::None,
                Int | Duration => Arg::Int(self.int),
                Timestamp => Arg::Int(time),
                ArgKind::Decimal => Arg::Decimal(self.decimal),
                Float => Arg::Float(self.float),
                Str => Arg::Str(self.text),
                Bool => Arg::Bool(self.flag),
            };
            aggregates.iter().map(|&(_, kind)| arg(kind)).collect()
        }
    }

    fn event() -> impl Strategy<Value = Event> {
        let decimals: Vec<Decimal> = ["1.0", "1.00", "-2.5", "0", "0.000", "0.1"]
            .map(d)
            .into_iter()
            .chain([Decimal::MAX, Decimal::MIN])
            .collect();
        let step = prop_oneof![6 => -6i64..=8, 1 => -30i64..-10, 1 => 15i64..60];
        let int = prop_oneof![4 => -3i64..=3, 1 => Just(i64::MAX), 1 => Just(i64::MIN), 1 => Just(i64::MAX / 2 + 1)];
        let float = prop::sample::select(vec![0.0, -0.0, 0.5, 1.5, 0.1, 1e308, -1e308]);
        let text = prop::sample::select(vec!["", "a", "b", "ab", "é", "e\u{301}"]);
        (0..KEYS.len(), step, int, prop::sample::select(decimals), float, text, any::<bool>()).prop_map(
            |(key, step, int, decimal, float, text, flag)| Event {
                key,
                step,
                int,
                decimal,
                float,
                text,
                flag,
            },
        )
    }

    /// A key of the [`Model`], every record it entered kept.
    struct ModelKey {
        key: Key<'static>,
        latest: i64,
        /// When it last entered a record, on the model's clock.
        entered: u64,
        records: Vec<(i64, Vec<Arg<'static>>)>,
    }

    /// The store's semantics without its cleverness: every record of a
    /// held key kept forever, every question answered by a full scan,
    /// bounds in plain `i128`. With `forget`, keys are forgotten, swept and
    /// evicted by the rules of the module's doc; without, never.
    struct Model {
        shape: WindowShape,
        max_keys: Option<usize>,
        forget: bool,
        keys: Vec<ModelKey>,
        watermark: Option<i64>,
        clock: u64,
        evicted: u64,
        expired: u64,
    }

    impl Model {
        fn new(shape: WindowShape, max_keys: Option<usize>, forget: bool) -> Model {
            Model {
                shape,
                max_keys,
                forget,
                keys: Vec::new(),
                watermark: None,
                clock: 0,
                evicted: 0,
                expired: 0,
            }
        }

        fn reach(&self) -> i128 {
            i128::from(self.shape.span) + i128::from(self.shape.grace)
        }

        fn forgotten(&self, latest: i64) -> bool {
            self.forget && self.watermark.is_some_and(|w| i128::from(latest) + self.reach() <= i128::from(w))
        }

        fn forget_key(&mut self, index: usize) {
            self.keys.remove(index);
            self.expired += 1;
        }

        fn oldest(&self) -> Option<usize> {
            (0..self.keys.len()).min_by_key(|&i| self.keys[i].entered)
        }

        fn observe(&mut self, key: Key<'static>, time: i64, args: &[Arg<'static>]) -> String {
            let mut found = self.keys.iter().position(|k| k.key == key);
            if let Some(i) = found
                && self.forgotten(self.keys[i].latest)
            {
                self.forget_key(i);
                found = None;
            }
            if let Some(i) = found
                && i128::from(time) < i128::from(self.keys[i].latest) - i128::from(self.shape.grace)
            {
                return "late".to_string();
            }
            let i = found.unwrap_or_else(|| {
                let capacity = self.max_keys.unwrap_or(usize::MAX).max(1);
                if !self.forgotten(time) && self.keys.len() >= capacity {
                    let oldest = self.oldest().unwrap();
                    self.keys.remove(oldest);
                    self.evicted += 1;
                }
                self.keys.push(ModelKey { key, latest: time, entered: 0, records: Vec::new() });
                self.keys.len() - 1
            });
            let held = &mut self.keys[i];
            held.latest = held.latest.max(time);
            held.records.push((time, args.to_vec()));
            let out = self.aggregates(&self.keys[i].records, time);
            self.watermark = Some(self.watermark.map_or(time, |w| w.max(time)));
            self.clock += 1;
            if self.forgotten(self.keys[i].latest) {
                self.forget_key(i);
            } else {
                self.keys[i].entered = self.clock;
            }
            while let Some(oldest) = self.oldest()
                && self.forgotten(self.keys[oldest].latest)
            {
                self.forget_key(oldest);
            }
            out.iter().map(render).collect::<Vec<_>>().join(" | ")
        }

        fn aggregates(&self, records: &[(i64, Vec<Arg<'static>>)], of: i64) -> Vec<Aggregated> {
            let span = i128::from(self.shape.span);
            let window: Vec<&[Arg<'static>]> = records
                .iter()
                .filter(|&&(time, _)| time <= of && i128::from(time) > i128::from(of) - span)
                .map(|(_, args)| &args[..])
                .collect();
            let aggregate = |(i, &(kind, arg)): (usize, &(AggregateKind, ArgKind))| {
                let values: Vec<Arg<'static>> = window.iter().map(|args| args[i]).collect();
                match kind {
                    Count => Aggregated::Int(values.len() as i64),
                    Distinct => {
                        let mut seen: Vec<Arg<'static>> = Vec::new();
                        values.iter().for_each(|v| {
                            if !seen.contains(v) {
                                seen.push(*v)
                            }
                        });
                        Aggregated::Int(seen.len() as i64)
                    }
                    Sum => values[1..].iter().fold(number(values[0]), |sum, &v| model_add(sum, v, arg)),
                    Max | Min => {
                        let wanted =
                            if kind == Max { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less };
                        let better = |best, &v| if model_order(v, best) == wanted { v } else { best };
                        number(values[1..].iter().fold(values[0], better))
                    }
                }
            };
            self.shape.aggregates.iter().enumerate().map(aggregate).collect()
        }
    }

    fn number(arg: Arg<'static>) -> Aggregated {
        match arg {
            Arg::Int(int) => Aggregated::Int(int),
            Arg::Decimal(decimal) => Aggregated::Decimal(decimal),
            Arg::Float(float) => Aggregated::Float(float),
            other => panic!("not a number: {other:?}"),
        }
    }

    fn model_add(sum: Aggregated, value: Arg<'static>, kind: ArgKind) -> Aggregated {
        let result = match (sum, value) {
            (Aggregated::Int(a), Arg::Int(b)) if kind == Duration => {
                ops::duration_add(a, b).map(Aggregated::Int)
            }
            (Aggregated::Int(a), Arg::Int(b)) => ops::int_add(a, b).map(Aggregated::Int),
            (Aggregated::Decimal(a), Arg::Decimal(b)) => ops::dec_add(a, b).map(Aggregated::Decimal),
            (Aggregated::Float(a), Arg::Float(b)) => ops::float_add(a, b).map(Aggregated::Float),
            (failed, _) => Ok(failed),
        };
        result.unwrap_or_else(Aggregated::Failed)
    }

    fn model_order(a: Arg<'static>, b: Arg<'static>) -> std::cmp::Ordering {
        match (a, b) {
            (Arg::Int(a), Arg::Int(b)) => a.cmp(&b),
            (Arg::Decimal(a), Arg::Decimal(b)) => decimal::cmp(a, b),
            (Arg::Float(a), Arg::Float(b)) => ops::float_cmp(a, b),
            other => panic!("not ordered: {other:?}"),
        }
    }

    /// The times of `key`'s records in `store`, in entry order (`None`
    /// when the key is not held).
    fn held_times(store: &WindowStore, key: Key<'_>) -> Option<Vec<i64>> {
        let slot = store.find(store.hash(KeyView::from(key)), key)?;
        Some(store.slot(slot).records.iter().map(|record| record.time).collect())
    }

    /// Checks `store` against the model after each event: the observation,
    /// the counts, and for each key exactly the records a later record may
    /// need (those of the model not out of reach of the key's latest time).
    fn agrees_with_model(
        mut store: WindowStore,
        mut model: Model,
        events: &[Event],
    ) -> Result<(), TestCaseError> {
        let aggregates = model.shape.aggregates.clone();
        let mut out = Vec::new();
        let mut time = 0i64;
        for (i, event) in events.iter().enumerate() {
            time += event.step;
            let (key, args) = (KEYS[event.key], event.args(time, &aggregates));
            let observed = shown(store.observe(key, time, &args, &mut out), &out);
            prop_assert_eq!(observed, model.observe(key, time, &args), "event {} ({:?} at {})", i, key, time);
            let counts = (store.keys(), store.evicted(), store.expired());
            prop_assert_eq!(counts, (model.keys.len(), model.evicted, model.expired), "event {}: counts", i);
            for key in KEYS {
                let needed = model.keys.iter().find(|k| k.key == key).map(|k| {
                    let reach = model.reach();
                    let needed = |&&(time, _): &&(i64, _)| i128::from(time) + reach > i128::from(k.latest);
                    k.records.iter().filter(needed).map(|&(time, _)| time).collect::<Vec<_>>()
                });
                prop_assert_eq!(
                    held_times(&store, key),
                    needed,
                    "event {}: the records held for {:?}",
                    i,
                    key
                );
            }
            let records: usize = store.slots.iter().map(|slot| slot.records.heap_bytes()).sum();
            prop_assert_eq!(store.records_bytes, records, "event {}: the records' bytes as counted", i);
        }
        Ok(())
    }

    /// With no key bound, the store answers every record that is not late
    /// against the watermark as if it kept every record forever.
    fn loses_nothing_needed(
        mut store: WindowStore,
        mut forever: Model,
        events: &[Event],
    ) -> Result<(), TestCaseError> {
        let (grace, aggregates) = (forever.shape.grace, forever.shape.aggregates.clone());
        let mut out = Vec::new();
        let mut time = 0i64;
        for (i, event) in events.iter().enumerate() {
            time += event.step;
            let (key, args) = (KEYS[event.key], event.args(time, &aggregates));
            let watermark = store.watermark();
            let observed = shown(store.observe(key, time, &args, &mut out), &out);
            let expected = forever.observe(key, time, &args);
            if watermark.is_none_or(|w| i128::from(time) >= i128::from(w) - i128::from(grace)) {
                prop_assert_eq!(observed, expected, "event {} ({:?} at {})", i, key, time);
            }
        }
        Ok(())
    }

    fn seeded(cases: u32) -> Config {
        Config {
            cases,
            rng_seed: RngSeed::Fixed(0x57_1D_0A_5E),
            failure_persistence: None,
            ..Config::default()
        }
    }

    proptest! {
        #![proptest_config(seeded(400))]

        #[test]
        fn the_store_is_the_model(
            span in 1i64..=20,
            grace in 0i64..=8,
            max_keys in prop_oneof![Just(None), (1usize..=4).prop_map(Some)],
            events in prop::collection::vec(event(), 1..150),
        ) {
            let shape = shape(span, grace, &every_aggregate());
            let store = WindowStore::new(shape.clone(), max_keys).unwrap();
            agrees_with_model(store, Model::new(shape.clone(), max_keys, true), &events)?;
            // Two hash values for four keys: the index's chains.
            let mut colliding = WindowStore::new(shape.clone(), max_keys).unwrap();
            colliding.hash_mask = 1;
            agrees_with_model(colliding, Model::new(shape.clone(), max_keys, true), &events)?;
            let store = WindowStore::new(shape.clone(), None).unwrap();
            loses_nothing_needed(store, Model::new(shape, None, false), &events)?;
        }
    }

    /// 100,000 keys of one record each (count, sum of a decimal, distinct
    /// strings): the layout a million keys must fit in 300 MB.
    fn bytes_per_key(keys: usize) -> usize {
        let shape = shape(600_000_000_000, 0, &[COUNT, (Sum, ArgKind::Decimal), (Distinct, Str)]);
        let mut store = WindowStore::new(shape, None).unwrap();
        let (mut out, mut key) = (Vec::new(), String::new());
        let amount = d("1234.56");
        for i in 0..keys {
            key.clear();
            key.push_str(&format!("account-{i:07}"));
            let observation = store.observe(
                Key::Str(&key),
                i as i64,
                &[NONE, Arg::Decimal(amount), Arg::Str("DE")],
                &mut out,
            );
            assert_eq!(observation, Observation::Entered);
        }
        assert_eq!(store.keys(), keys);
        store.heap_bytes() / keys
    }

    #[test]
    fn a_key_of_one_record_takes_under_300_bytes() {
        let per_key = bytes_per_key(100_000);
        assert!(per_key < 300, "{per_key} bytes a key");
    }

    #[test]
    #[ignore = "a million keys: slow unoptimised; run with --ignored"]
    fn a_million_keys_take_under_300_mb() {
        let per_key = bytes_per_key(1_000_000);
        assert!(per_key * 1_000_000 < 300_000_000, "{per_key} bytes a key");
    }

    /// Runs `threads` threads of `each(thread, store, out)` on one store.
    fn hammer<T: Send + 'static>(
        store: &Arc<SharedWindowStore>,
        threads: usize,
        each: impl Fn(usize, &SharedWindowStore, &mut Vec<Aggregated>) -> T + Send + Sync + 'static,
    ) -> Vec<T> {
        let each = Arc::new(each);
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let (store, each) = (Arc::clone(store), Arc::clone(&each));
                thread::spawn(move || each(thread, &store, &mut Vec::new()))
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().unwrap()).collect()
    }

    fn int(aggregated: &Aggregated) -> i64 {
        match aggregated {
            Aggregated::Int(int) => *int,
            other => panic!("not an int: {other:?}"),
        }
    }

    #[test]
    fn eight_threads_on_one_key_count_every_record_once() {
        const EACH: usize = 250;
        let store = Arc::new(SharedWindowStore::new(shape(10, 0, &[COUNT, (Sum, Int)]), None).unwrap());
        let counts = hammer(&store, 8, |_, store, out| {
            (0..EACH)
                .map(|_| {
                    assert_eq!(
                        store.observe(Key::Str("hot"), 0, &[NONE, Arg::Int(1)], out),
                        Observation::Entered
                    );
                    assert_eq!(int(&out[0]), int(&out[1]), "count and sum of ones agree");
                    int(&out[0])
                })
                .collect::<Vec<_>>()
        });
        let mut counts: Vec<i64> = counts.into_iter().flatten().collect();
        counts.sort_unstable();
        assert_eq!(counts, (1..=8 * EACH as i64).collect::<Vec<_>>(), "each record saw each before it once");
        let mut out = Vec::new();
        store.observe(Key::Str("hot"), 0, &[NONE, Arg::Int(1)], &mut out);
        assert_eq!(int(&out[0]), 8 * EACH as i64 + 1);
    }

    #[test]
    fn eight_threads_on_one_key_over_time_keep_the_span() {
        // Times 0..400 from each thread, grace enough that none is late,
        // a span of 200: a record at 399 sees the 8 * 200 at 200 or more.
        let store = Arc::new(SharedWindowStore::new(shape(200, 1000, &[COUNT]), None).unwrap());
        hammer(&store, 8, |_, store, out| {
            for time in 0..400 {
                assert_eq!(store.observe(Key::Int(7), time, &[NONE], out), Observation::Entered);
            }
        });
        let mut out = Vec::new();
        store.observe(Key::Int(7), 399, &[NONE], &mut out);
        assert_eq!(int(&out[0]), 8 * 200 + 1);
    }

    #[test]
    fn eight_threads_on_many_keys() {
        const KEYS: i64 = 500;
        const ROUNDS: i64 = 20;
        let store = Arc::new(SharedWindowStore::new(shape(1000, 1000, &[COUNT]), None).unwrap());
        hammer(&store, 8, |thread, store, out| {
            for round in 0..ROUNDS {
                for key in 0..KEYS {
                    let key = (key + thread as i64 * 61) % KEYS;
                    assert_eq!(store.observe(Key::Int(key), round, &[NONE], out), Observation::Entered);
                }
            }
        });
        assert_eq!((store.keys(), store.evicted(), store.expired()), (KEYS as usize, 0, 0));
        let mut out = Vec::new();
        for key in 0..KEYS {
            store.observe(Key::Int(key), ROUNDS, &[NONE], &mut out);
            assert_eq!(int(&out[0]), 8 * ROUNDS + 1, "key {key}");
        }
    }

    #[test]
    fn a_shared_store_splits_max_keys_over_its_shards() {
        for max_keys in [1, 5, 100] {
            let store = SharedWindowStore::new(shape(10, 0, &[COUNT]), Some(max_keys)).unwrap();
            let mut out = Vec::new();
            for key in 0..1000 {
                store.observe(Key::Int(key), 0, &[NONE], &mut out);
            }
            assert!(store.keys() <= max_keys, "{} keys held of {max_keys}", store.keys());
            assert_eq!(store.keys() as u64 + store.evicted(), 1000);
        }
    }
}
