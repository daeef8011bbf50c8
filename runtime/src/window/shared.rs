//! [`SharedWindowStore`]: one window's state for many threads (the server,
//! batch's window pass), as shards of [`WindowStore`] chosen by the key's
//! hash, so one key's observe is atomic and two keys rarely contend; and
//! [`Entering`], every shard locked for a run of records entered one after
//! the other.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::mem::size_of;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::key_records::{KeyView, allocation_bytes};
use super::limits::WindowLimits;
use super::shape::{Aggregated, Arg, Key, ShapeError, WindowShape};
use super::store::{Ahead, Observation, Ticket, WindowStore};

/// The most shards of a [`SharedWindowStore`].
const SHARDS: usize = 64;

/// A [`WindowStore`] for many threads: see the module's doc. The bounds on
/// keys and bytes are split over the shards, each evicting its own least
/// recently entered keys; there are fewer shards when a bound is small,
/// so that each shard's share of the bytes holds two of the largest keys.
pub struct SharedWindowStore {
    hasher: RandomState,
    shards: Box<[Mutex<WindowStore>]>,
}

impl SharedWindowStore {
    /// As [`WindowStore::new`], in at most 64 shards.
    pub fn new(shape: WindowShape, limits: WindowLimits) -> Result<SharedWindowStore, ShapeError> {
        let count = shard_count(&limits);
        let hasher = RandomState::new();
        let share = |most: Option<usize>, shard: usize| {
            most.map(|most| most / count + usize::from(shard < most % count))
        };
        let shards = (0..count)
            .map(|shard| {
                let limits = WindowLimits {
                    keys: share(limits.keys, shard),
                    bytes: share(limits.bytes, shard),
                    ..limits
                };
                WindowStore::with_hasher(shape.clone(), limits, hasher.clone()).map(Mutex::new)
            })
            .collect::<Result<_, _>>()?;
        Ok(SharedWindowStore { hasher, shards })
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
        self.shard(hash).observe_hashed(hash, key, time, args, out)
    }

    /// As [`WindowStore::withdraw`].
    pub fn withdraw(&self, ticket: Ticket) -> bool {
        self.shard(ticket.hash).withdraw(ticket)
    }

    /// The store locked for records entered one after the other
    /// ([`Entering`]).
    pub fn entering(&self) -> Entering<'_> {
        let shards = self.shards.iter().map(lock).collect();
        Entering { store: self, shards }
    }

    fn shard(&self, hash: u64) -> MutexGuard<'_, WindowStore> {
        lock(&self.shards[self.shard_of(hash)])
    }

    fn shard_of(&self, hash: u64) -> usize {
        ((u128::from(hash) * self.shards.len() as u128) >> 64) as usize
    }

    /// The keys held, over all shards.
    pub fn keys(&self) -> usize {
        self.sum(WindowStore::keys)
    }

    /// The keys dropped because a shard held its share of the keys or
    /// bytes.
    pub fn evicted(&self) -> u64 {
        self.sum(WindowStore::evicted)
    }

    /// The records whose window read as a key's bound.
    pub fn full(&self) -> u64 {
        self.sum(WindowStore::full)
    }

    /// The bytes the keys' buffers hold, as the bound counts them.
    pub fn records_bytes(&self) -> usize {
        self.sum(WindowStore::records_bytes)
    }

    /// The heap bytes held, over all shards.
    pub fn heap_bytes(&self) -> usize {
        allocation_bytes(self.shards.len() * size_of::<Mutex<WindowStore>>())
            + self.sum(WindowStore::heap_bytes)
    }

    fn sum<N: std::iter::Sum<N>>(&self, of: impl Fn(&WindowStore) -> N) -> N {
        self.shards.iter().map(|shard| of(&lock(shard))).sum()
    }
}

/// The shards for `limits`: 64, or fewer so that each has at least one key
/// and room in its share of the bytes for two of the largest keys (a
/// key's buffer may be twice what it uses).
fn shard_count(limits: &WindowLimits) -> usize {
    let by_keys = limits.keys.unwrap_or(SHARDS);
    let by_bytes = match (limits.bytes, limits.key_bytes) {
        (Some(bytes), Some(key_bytes)) => bytes / key_bytes.saturating_mul(2).max(1),
        _ => SHARDS,
    };
    by_keys.min(by_bytes).clamp(1, SHARDS)
}

fn lock(shard: &Mutex<WindowStore>) -> MutexGuard<'_, WindowStore> {
    shard.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A [`SharedWindowStore`] with every shard locked, for a run of records
/// entered one after the other (a batch's chunk): no lock per record, and
/// the keys of the records to come can be fetched into the cache while
/// the ones before are entered ([`Entering::prefetch`]), so that their
/// cache misses overlap. Single requests of other threads wait until it
/// is dropped.
pub struct Entering<'s> {
    store: &'s SharedWindowStore,
    shards: Vec<MutexGuard<'s, WindowStore>>,
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
        self.shards[self.store.shard_of(hash)].observe_hashed(hash, key, time, args, out)
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
            .finish_non_exhaustive()
    }
}
