//! One conversation's aliases as data: compact records, a UUID index and a
//! number table per prefix, and when each alias was last used. No locking,
//! no store, no policy (limits and expiry are the manager's and the
//! stores'); the alias manager's local copy and the in-memory store both
//! keep their conversations in one.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use hashbrown::HashTable;

// tokio's clock, so that tests can pause and advance it instead of sleeping
// through an alias's idle time (outside a runtime it is the system's).
use tokio::time::Instant;

use serde::{Deserialize, Serialize};

use super::uuid::{uuid_bytes, uuid_text};

/// One registration in an [`AliasSnapshot`](crate::alias::AliasSnapshot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AliasEntry {
    /// The alias prefix, e.g. `link`.
    pub prefix: String,
    /// The alias, e.g. `link-1`.
    pub alias: String,
    /// The UUID in lowercase.
    pub uuid: String,
}

/// One conversation's aliases, compactly: one 40-byte record per
/// registration, an index from UUID to its first record, and per prefix a
/// dense table from alias number to record. Alias and UUID strings are made
/// on demand; `by_prefix` lists and snapshots are derived from the records.
#[derive(Debug, Default, Clone)]
pub(crate) struct AliasTable {
    /// The store's epoch of the conversation this copy was learnt in
    /// (shared managers only).
    epoch: Option<String>,
    /// The prefixes met, in order; a record names its prefix by index.
    prefixes: Vec<PrefixTable>,
    /// Every registration, in order.
    records: Vec<Record>,
    /// UUID → its first record; later records of the same UUID (other
    /// prefixes) chain through `Record::next`. It holds only the record's
    /// index (4 bytes a slot, where a map would hold the 16-byte UUID
    /// beside it a second time), hashed by the UUID the record holds (see
    /// [`first_record`](Self::first_record)).
    by_uuid: HashTable<u32>,
    /// Records expired or evicted ([`DEAD`]), kept until a compaction.
    dead: usize,
    /// The clock's zero for [`Record::used`]: the table's first use.
    base: Option<Instant>,
    /// The second of the last [`expire_idle`](Self::expire_idle) sweep: one
    /// sweep a second is enough for expiry counted in seconds.
    swept: Option<u32>,
    /// The last [`Record::seq`] given.
    seq: u32,
    /// When a store last answered for this copy (shared managers only):
    /// past the store's TTL the copy may describe a conversation the store
    /// forgot, and is not sent as a floor.
    heard: Option<Instant>,
}

/// One registration: `prefix-number` stands for `uuid`.
#[derive(Debug, Clone, Copy)]
struct Record {
    uuid: [u8; 16],
    number: u64,
    /// The prefix's index, or [`DEAD`] for a record no longer held.
    prefix: u16,
    /// The next record of the same UUID, or [`NO_RECORD`].
    next: u32,
    /// When it was last given out, shown or resolved: seconds after `base`.
    used: u32,
    /// The order of its last use among the table's records (for least
    /// recently used, exact where `used` ties within a second).
    seq: u32,
}

const NO_RECORD: u32 = u32::MAX;

/// The prefix of a record that expired or was evicted.
const DEAD: u16 = u16::MAX;

/// The hash of a UUID in a table's index: std's SipHash with keys drawn at
/// random once per process, as a `HashMap`'s are (a caller cannot choose
/// UUIDs that collide), held once rather than by every table.
fn uuid_hash(uuid: &[u8; 16]) -> u64 {
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    KEYS.get_or_init(RandomState::new).hash_one(uuid)
}

/// Whether an index entry (a record number) names a record of `uuid`: the
/// one test by which the UUID index finds its entries.
fn names<'a>(records: &'a [Record], uuid: &'a [u8; 16]) -> impl Fn(&u32) -> bool + 'a {
    move |&i| records.get(i as usize).is_some_and(|r| r.uuid == *uuid)
}

/// An idle time in the whole seconds a table keeps (at least one).
pub(crate) fn idle_secs(idle: std::time::Duration) -> u32 {
    u32::try_from(idle.as_secs()).unwrap_or(u32::MAX).max(1)
}

/// Up to this many records a table grows [`SMALL_TABLE_STEP`] at a time.
const SMALL_TABLE: usize = 64;
const SMALL_TABLE_STEP: usize = 4;

/// A point an [`AliasTable`] can return to (see [`AliasTable::rollback`]).
pub(crate) struct Checkpoint {
    records: usize,
    counters: Vec<u64>,
    /// The last use stamped before it: a record used since has a greater
    /// [`Record::seq`].
    seq: u32,
}

/// Alias numbers this far past a prefix's dense table go to its sparse map
/// (only an edited snapshot or a store can produce them).
const DENSE_GAP: u64 = 4096;

#[derive(Debug, Clone, Default)]
struct PrefixTable {
    name: String,
    /// The last number given out.
    counter: u64,
    /// `dense[n - 1]`: the record of alias number `n`, or [`NO_RECORD`].
    dense: Vec<u32>,
    /// The records of numbers past the dense table's reach; never one the
    /// dense table covers (see [`set`](Self::set)).
    sparse: HashMap<u64, u32>,
    /// Numbers the store lost (inclusive ranges): given out once, held no
    /// longer, and never to be given out or resolved again.
    lost: Vec<(u64, u64)>,
}

impl PrefixTable {
    fn is_lost(&self, number: u64) -> bool {
        self.lost
            .iter()
            .any(|&(first, last)| (first..=last).contains(&number))
    }

    /// Keeps `first..=last` as lost, merged with a range it touches.
    fn add_lost(&mut self, first: u64, last: u64) {
        if first > last {
            return;
        }
        for range in &mut self.lost {
            if first <= range.1.saturating_add(1) && range.0 <= last.saturating_add(1) {
                *range = (range.0.min(first), range.1.max(last));
                return;
            }
        }
        self.lost.push((first, last));
    }

    fn record_of(&self, number: u64) -> Option<u32> {
        let slot = usize::try_from(number.checked_sub(1)?).ok()?;
        match self.dense.get(slot) {
            Some(&record) if record != NO_RECORD => Some(record),
            Some(_) => None,
            None => self.sparse.get(&number).copied(),
        }
    }

    fn unset(&mut self, number: u64) {
        let slot = number.checked_sub(1).and_then(|n| usize::try_from(n).ok());
        match slot.and_then(|slot| self.dense.get_mut(slot)) {
            Some(record) => *record = NO_RECORD,
            None => {
                self.sparse.remove(&number);
            }
        }
    }

    fn set(&mut self, number: u64, record: u32) {
        let dense_len = self.dense.len() as u64;
        match usize::try_from(number - 1) {
            Ok(slot) if number <= dense_len.saturating_add(DENSE_GAP) => {
                if slot >= self.dense.len() {
                    self.dense.resize(slot + 1, NO_RECORD);
                    // The dense table now reaches numbers kept sparse so far:
                    // move them, or `record_of` would look only in the dense
                    // slot and miss them.
                    let reach = self.dense.len() as u64;
                    let moved: Vec<u64> = self
                        .sparse
                        .keys()
                        .copied()
                        .filter(|&n| n <= reach)
                        .collect();
                    for n in moved {
                        if let Some(r) = self.sparse.remove(&n) {
                            self.dense[(n - 1) as usize] = r;
                        }
                    }
                }
                self.dense[slot] = record;
            }
            _ => {
                self.sparse.insert(number, record);
            }
        }
    }
}

impl AliasTable {
    /// Drops the local copy when it was learnt in another epoch of the
    /// conversation. A copy that was `fresh` (heard from the store within
    /// its TTL) and meets another epoch saw the store lose the conversation:
    /// every number it had seen is kept as lost, so that none of them is
    /// taken to mean a new object.
    pub(crate) fn enter_epoch(&mut self, epoch: Option<&str>, fresh: bool) {
        if self.epoch.as_deref() == epoch {
            return;
        }
        let seen = if fresh && self.epoch.is_some() {
            std::mem::take(&mut self.prefixes)
        } else {
            Vec::new()
        };
        *self = AliasTable {
            epoch: epoch.map(str::to_owned),
            ..AliasTable::default()
        };
        for seen in seen {
            let p = self.prefix_index(&seen.name);
            let table = &mut self.prefixes[p];
            table.lost = seen.lost;
            table.add_lost(1, seen.counter);
            table.counter = seen.counter;
        }
    }

    /// Whether a store answered for this copy less than `ttl` ago: only
    /// then can the store still hold what the copy describes.
    pub(crate) fn heard_within(&self, ttl: std::time::Duration) -> bool {
        self.heard.is_some_and(|at| at.elapsed() < ttl)
    }

    /// Notes that a store answered for this copy now.
    pub(crate) fn heard_now(&mut self) {
        self.heard = Some(Instant::now());
    }

    /// What this copy has seen, as a floor for the store (see
    /// [`Floor`](super::Floor)); empty without an epoch.
    pub(crate) fn floor(&self) -> super::Floor {
        let Some(epoch) = &self.epoch else {
            return super::Floor::default();
        };
        super::Floor {
            epoch: Some(epoch.clone()),
            counters: self
                .prefixes
                .iter()
                .filter(|t| t.counter > 0)
                .map(|t| (t.name.clone(), t.counter))
                .collect(),
        }
    }

    /// Raises `prefix`'s counter to `floor`, keeping the numbers it skips
    /// as lost: a caller saw them given out, and this table never did.
    pub(crate) fn raise_counter(&mut self, prefix: &str, floor: u64) {
        let p = self.prefix_index(prefix);
        let table = &mut self.prefixes[p];
        if floor > table.counter {
            let first = table.counter + 1;
            table.add_lost(first, floor);
            table.counter = floor;
        }
    }

    /// Keeps `alias` (lowercase) as lost: the store no longer holds it and
    /// says so, or it answered a second UUID for it. Its record, if any, is
    /// dropped; the number is never resolved or given out again.
    pub(crate) fn mark_lost(&mut self, alias: &str) {
        let Some((prefix, n)) = Self::canonical(alias) else {
            return;
        };
        self.forget_alias(alias);
        let p = self.prefix_index(prefix);
        let table = &mut self.prefixes[p];
        table.add_lost(n, n);
        table.counter = table.counter.max(n);
    }

    /// Whether `alias` (lowercase) is one the store lost.
    pub(crate) fn is_lost(&self, alias: &str) -> bool {
        let Some((prefix, n)) = Self::canonical(alias) else {
            return false;
        };
        self.find_prefix(prefix)
            .is_some_and(|p| self.prefixes[p].is_lost(n))
    }

    /// Records an alias the store gave out (no limit: the store enforces
    /// it). `false` when it is refused: its number is lost, or held here for
    /// another UUID — one alias never stands for two objects, whatever a
    /// store that lost writes answers.
    pub(crate) fn learn(&mut self, prefix: &str, uuid: String, alias: String) -> bool {
        let Some((alias_prefix, n)) = proto_ai_tools_schema::names::split_alias(&alias) else {
            return false;
        };
        if alias_prefix != prefix || n == 0 {
            return false;
        }
        if let Some((_, held)) = self.lookup_alias(&alias) {
            return held == uuid;
        }
        if self.is_lost(&alias) {
            return false;
        }
        // The store gave the UUID a new alias (the old one expired there):
        // the store's word wins over a stale copy.
        if let Some(stale) = self.alias_of(prefix, &uuid) {
            self.forget_alias(&stale);
        }
        let Some(bytes) = uuid_bytes(&uuid) else {
            return false;
        };
        let p = self.prefix_index(prefix);
        let table = &mut self.prefixes[p];
        table.counter = table.counter.max(n);
        self.insert(p, bytes, n);
        true
    }

    /// The aliases held.
    pub(crate) fn len(&self) -> usize {
        self.records.len() - self.dead
    }

    /// Seconds since the table's first use, on tokio's clock.
    fn now(&mut self) -> u32 {
        let base = *self.base.get_or_insert_with(Instant::now);
        u32::try_from(base.elapsed().as_secs()).unwrap_or(u32::MAX)
    }

    /// The stamp of a use now: the second, and the next use's order.
    fn next_use(&mut self) -> (u32, u32) {
        // Never reached inside a batch: `checkpoint` renumbers half-way.
        if self.seq == u32::MAX {
            self.renumber_uses();
        }
        self.seq += 1;
        (self.now(), self.seq)
    }

    /// Gives the live records the uses `1..=n` in the order of their last
    /// use, so that [`Record::seq`] never saturates (past which every use
    /// would tie and least recently used would be arbitrary).
    fn renumber_uses(&mut self) {
        let mut live: Vec<(u32, usize)> = self
            .records
            .iter()
            .enumerate()
            .filter(|(_, r)| r.prefix != DEAD)
            .map(|(i, r)| (r.seq, i))
            .collect();
        live.sort_unstable();
        for record in &mut self.records {
            record.seq = 0;
        }
        let mut seq = 0;
        for (_, index) in live {
            seq += 1;
            self.records[index].seq = seq;
        }
        self.seq = seq;
    }

    /// Sets the last use given, so that a test can reach the top of the
    /// sequence without 2^32 uses.
    #[cfg(test)]
    pub(crate) fn set_last_use(&mut self, seq: u32) {
        self.seq = seq;
    }

    /// Marks record `index` used now.
    fn stamp(&mut self, index: u32) {
        let (used, seq) = self.next_use();
        if let Some(record) = self.records.get_mut(index as usize) {
            record.used = used;
            record.seq = seq;
        }
    }

    /// Marks `alias` (lowercase) used now, if held.
    pub(crate) fn touch_alias(&mut self, alias: &str) {
        let Some((prefix, n)) = proto_ai_tools_schema::names::split_alias(alias) else {
            return;
        };
        let Some(p) = self.find_prefix(prefix) else {
            return;
        };
        if let Some(index) = self.prefixes[p].record_of(n) {
            self.stamp(index);
        }
    }

    /// The prefix and number of `alias` when it is written as this table
    /// writes aliases (`link-7`, not `link-07`): other spellings name no
    /// record, so they never expire or forget one.
    fn canonical(alias: &str) -> Option<(&str, u64)> {
        let (prefix, n) = proto_ai_tools_schema::names::split_alias(alias)?;
        (proto_ai_tools_schema::names::alias(prefix, n) == alias).then_some((prefix, n))
    }

    /// Whether `alias` (lowercase) was given out here and is held no
    /// longer: its prefix is known and its number is not past the last one
    /// given out, but no record holds it. Numbers are never given out
    /// twice, so such an alias expired (or was evicted); any other alias
    /// that is not held was never given.
    pub(crate) fn is_expired(&self, alias: &str) -> bool {
        let Some((prefix, n)) = Self::canonical(alias) else {
            return false;
        };
        self.find_prefix(prefix).is_some_and(|p| {
            let table = &self.prefixes[p];
            n >= 1 && n <= table.counter && table.record_of(n).is_none() && !table.is_lost(n)
        })
    }

    /// Forgets the records unused for more than `idle_secs`; how many.
    pub(crate) fn expire_idle(&mut self, idle_secs: u32) -> usize {
        let now = self.now();
        if self.swept == Some(now) {
            return 0;
        }
        self.swept = Some(now);
        let stale: Vec<u32> = (0..self.records.len())
            .filter(|&i| {
                let r = &self.records[i];
                r.prefix != DEAD && now.saturating_sub(r.used) > idle_secs
            })
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        for &index in &stale {
            self.remove_record(index);
        }
        self.compact_if_sparse();
        stale.len()
    }

    /// Forgets the `count` least recently used records that were not used
    /// since `checkpoint` (those registered or used by the batch since are
    /// kept). `false` (and nothing forgotten) when fewer than `count` are
    /// there to forget.
    pub(crate) fn evict_least_recently_used(
        &mut self,
        count: usize,
        checkpoint: &Checkpoint,
    ) -> bool {
        let before = checkpoint.records.min(self.records.len());
        let mut candidates: Vec<(u32, u32)> = self.records[..before]
            .iter()
            .enumerate()
            .filter(|(_, r)| r.prefix != DEAD && r.seq <= checkpoint.seq)
            .filter_map(|(i, r)| u32::try_from(i).ok().map(|i| (r.seq, i)))
            .collect();
        if candidates.len() < count {
            return false;
        }
        if count == 0 {
            return true;
        }
        candidates.select_nth_unstable(count - 1);
        for &(_, index) in &candidates[..count] {
            self.remove_record(index);
        }
        self.compact_if_sparse();
        true
    }

    /// Records that `alias` (lowercase) was given out (a store says so), so
    /// that its number is known as used.
    pub(crate) fn note_given(&mut self, alias: &str) {
        if let Some((prefix, n)) = Self::canonical(alias) {
            let p = self.prefix_index(prefix);
            let table = &mut self.prefixes[p];
            table.counter = table.counter.max(n);
        }
    }

    /// Forgets `alias` (lowercase), which a store no longer holds.
    pub(crate) fn forget_alias(&mut self, alias: &str) {
        let Some((prefix, n)) = Self::canonical(alias) else {
            return;
        };
        let Some(p) = self.find_prefix(prefix) else {
            return;
        };
        if let Some(index) = self.prefixes[p].record_of(n) {
            self.remove_record(index);
            self.compact_if_sparse();
        }
    }

    /// The first record of `uuid`, from the index.
    fn first_record(&self, uuid: &[u8; 16]) -> Option<u32> {
        self.by_uuid
            .find(uuid_hash(uuid), names(&self.records, uuid))
            .copied()
    }

    /// Makes record `index` (which holds `uuid`, or is about to be pushed
    /// holding it) the first of `uuid` in the index.
    fn set_first_record(&mut self, uuid: [u8; 16], index: u32) {
        let records = &self.records;
        let entry = self
            .by_uuid
            .entry(uuid_hash(&uuid), names(records, &uuid), |&i| {
                records.get(i as usize).map_or(0, |r| uuid_hash(&r.uuid))
            });
        match entry {
            hashbrown::hash_table::Entry::Occupied(mut first) => *first.get_mut() = index,
            hashbrown::hash_table::Entry::Vacant(absent) => {
                absent.insert(index);
            }
        }
    }

    /// Drops `uuid` from the index (its records must still be in place).
    fn remove_first_record(&mut self, uuid: &[u8; 16]) {
        if let Ok(first) = self
            .by_uuid
            .find_entry(uuid_hash(uuid), names(&self.records, uuid))
        {
            first.remove();
        }
    }

    /// Unlinks record `index` from its prefix's table and its UUID's chain
    /// and marks it dead.
    fn remove_record(&mut self, index: u32) {
        let Some(record) = self.records.get(index as usize).copied() else {
            return;
        };
        if record.prefix == DEAD {
            return;
        }
        if let Some(table) = self.prefixes.get_mut(usize::from(record.prefix)) {
            table.unset(record.number);
        }
        if self.first_record(&record.uuid) == Some(index) {
            if record.next == NO_RECORD {
                self.remove_first_record(&record.uuid);
            } else {
                self.set_first_record(record.uuid, record.next);
            }
        } else if let Some(first) = self.first_record(&record.uuid) {
            let mut at = first as usize;
            while let Some(r) = self.records.get(at) {
                if r.next == index {
                    self.records[at].next = record.next;
                    break;
                }
                if r.next == NO_RECORD {
                    break;
                }
                at = r.next as usize;
            }
        }
        let dead = &mut self.records[index as usize];
        dead.prefix = DEAD;
        dead.next = NO_RECORD;
        self.dead += 1;
    }

    /// Rebuilds the table without its dead records once they outnumber the
    /// live ones, keeping the counters: memory follows what is held.
    fn compact_if_sparse(&mut self) {
        if self.dead < 64 || self.dead <= self.len() {
            return;
        }
        self.by_uuid.clear();
        let records = std::mem::take(&mut self.records);
        self.dead = 0;
        for table in &mut self.prefixes {
            table.dense = Vec::new();
            table.sparse = HashMap::new();
        }
        for record in records.into_iter().filter(|r| r.prefix != DEAD) {
            self.insert(usize::from(record.prefix), record.uuid, record.number);
            if let Some(last) = self.records.last_mut() {
                last.used = record.used;
                last.seq = record.seq;
            }
        }
    }

    /// The index of `prefix`, added if new.
    fn prefix_index(&mut self, prefix: &str) -> usize {
        if let Some(i) = self.prefixes.iter().position(|t| t.name == prefix) {
            return i;
        }
        self.prefixes.push(PrefixTable {
            name: prefix.to_owned(),
            ..PrefixTable::default()
        });
        self.prefixes.len() - 1
    }

    fn find_prefix(&self, prefix: &str) -> Option<usize> {
        self.prefixes.iter().position(|t| t.name == prefix)
    }

    fn alias_text(&self, record: &Record) -> String {
        proto_ai_tools_schema::names::alias(
            &self.prefixes[usize::from(record.prefix)].name,
            record.number,
        )
    }

    /// The prefix and UUID of an alias (exactly as written: lowercase).
    pub(crate) fn lookup_alias(&self, alias: &str) -> Option<(&str, String)> {
        let (prefix, n) = proto_ai_tools_schema::names::split_alias(alias)?;
        let table = &self.prefixes[self.find_prefix(prefix)?];
        let record = &self.records[table.record_of(n)? as usize];
        Some((table.name.as_str(), uuid_text(&record.uuid)))
    }

    pub(crate) fn uuid_of(&self, alias: &str) -> Option<String> {
        self.lookup_alias(alias).map(|(_, uuid)| uuid)
    }

    /// The records of `uuid`, first registered first.
    fn records_of(&self, uuid: &[u8; 16]) -> impl Iterator<Item = &Record> {
        let mut next = self.first_record(uuid).unwrap_or(NO_RECORD);
        std::iter::from_fn(move || {
            let record = self.records.get(next as usize)?;
            next = record.next;
            Some(record)
        })
    }

    pub(crate) fn aliases_of_uuid(&self, uuid: &str) -> Vec<String> {
        let Some(bytes) = uuid_bytes(uuid) else {
            return Vec::new();
        };
        self.records_of(&bytes)
            .map(|r| self.alias_text(r))
            .collect()
    }

    /// The prefixes `uuid` is registered under, first registered first.
    pub(crate) fn prefixes_of_uuid(&self, uuid: &str) -> Vec<&str> {
        let Some(bytes) = uuid_bytes(uuid) else {
            return Vec::new();
        };
        self.records_of(&bytes)
            .map(|r| self.prefixes[usize::from(r.prefix)].name.as_str())
            .collect()
    }

    pub(crate) fn aliases_of_prefix(&self, prefix: &str) -> Vec<String> {
        let Some(p) = self.find_prefix(prefix) else {
            return Vec::new();
        };
        self.records
            .iter()
            .filter(|r| usize::from(r.prefix) == p)
            .map(|r| self.alias_text(r))
            .collect()
    }

    pub(crate) fn alias_of(&self, prefix: &str, uuid: &str) -> Option<String> {
        let p = self.find_prefix(prefix)?;
        let bytes = uuid_bytes(uuid)?;
        self.records_of(&bytes)
            .find(|r| usize::from(r.prefix) == p)
            .map(|r| self.alias_text(r))
    }

    pub(crate) fn first_alias(&self, uuid: &str) -> Option<String> {
        let bytes = uuid_bytes(uuid)?;
        self.records_of(&bytes).next().map(|r| self.alias_text(r))
    }

    pub(crate) fn knows_uuid(&self, uuid: &str) -> bool {
        uuid_bytes(uuid).is_some_and(|bytes| self.first_record(&bytes).is_some())
    }

    /// `uuid` must be canonical, `prefix` valid.
    pub(crate) fn register(&mut self, prefix: &str, uuid: String) -> String {
        match uuid_bytes(&uuid) {
            Some(bytes) => self.register_bytes(prefix, bytes),
            None => uuid,
        }
    }

    /// The alias of `uuid` under `prefix` (valid), given out now if new.
    pub(crate) fn register_bytes(&mut self, prefix: &str, bytes: [u8; 16]) -> String {
        let mut alias = String::new();
        self.register_bytes_into(prefix, bytes, &mut alias);
        alias
    }

    /// [`register_bytes`](Self::register_bytes), the alias appended to `out`.
    pub(crate) fn register_bytes_into(&mut self, prefix: &str, bytes: [u8; 16], out: &mut String) {
        let known = self.find_prefix(prefix).and_then(|p| {
            self.records_of(&bytes)
                .find(|r| usize::from(r.prefix) == p)
                .map(|r| (p, r.number))
        });
        if let Some((p, number)) = known {
            proto_ai_tools_schema::names::write_alias(out, &self.prefixes[p].name, number);
            if let Some(index) = self.prefixes[p].record_of(number) {
                self.stamp(index);
            }
            return;
        }
        let p = self.prefix_index(prefix);
        let table = &self.prefixes[p];
        let mut n = table.counter.saturating_add(1);
        // A restored snapshot may have been edited by hand; never reuse an alias.
        while table.record_of(n).is_some() || table.is_lost(n) {
            n = n.saturating_add(1);
        }
        self.prefixes[p].counter = n;
        self.insert(p, bytes, n);
        proto_ai_tools_schema::names::write_alias(out, prefix, n);
    }

    /// What [`rollback`](Self::rollback) returns to.
    pub(crate) fn checkpoint(&mut self) -> Checkpoint {
        // Renumbered here, between batches, the uses can never run out
        // inside one (a batch stamps far fewer than 2^31 records), so a
        // checkpoint's `seq` stays comparable until it is used.
        if self.seq > u32::MAX / 2 {
            self.renumber_uses();
        }
        Checkpoint {
            records: self.records.len(),
            seq: self.seq,
            counters: self.prefixes.iter().map(|t| t.counter).collect(),
        }
    }

    /// How many alias numbers were given out since `checkpoint`: what a
    /// batch that is kept registered anew.
    pub(crate) fn numbers_given_since(&self, checkpoint: &Checkpoint) -> u64 {
        self.prefixes
            .iter()
            .enumerate()
            .map(|(p, table)| {
                let before = checkpoint.counters.get(p).copied().unwrap_or(0);
                table.counter.saturating_sub(before)
            })
            .sum()
    }

    /// Forgets every registration since `checkpoint` (they are the last
    /// records, so each is the end of its UUID's chain).
    pub(crate) fn rollback(&mut self, checkpoint: Checkpoint) {
        while self.records.len() > checkpoint.records {
            let Some(record) = self.records.last().copied() else {
                break;
            };
            let index = u32::try_from(self.records.len() - 1).unwrap_or(NO_RECORD - 1);
            // Unindexed while the record is still there: the index finds
            // an entry by the UUID of the record it names.
            if record.prefix != DEAD && self.first_record(&record.uuid) == Some(index) {
                self.remove_first_record(&record.uuid);
            }
            self.records.pop();
            if record.prefix == DEAD {
                self.dead -= 1;
                continue;
            }
            if let Some(before) = self.records.iter_mut().find(|r| r.next == index) {
                before.next = NO_RECORD;
            }
            if let Some(table) = self.prefixes.get_mut(usize::from(record.prefix)) {
                table.unset(record.number);
            }
        }
        self.prefixes.truncate(checkpoint.counters.len());
        for (table, counter) in self.prefixes.iter_mut().zip(checkpoint.counters) {
            table.counter = counter;
        }
    }

    /// The counters of every prefix met.
    pub(crate) fn counters(&self) -> BTreeMap<String, u64> {
        self.prefixes
            .iter()
            .map(|t| (t.name.clone(), t.counter))
            .collect()
    }

    pub(crate) fn set_counter(&mut self, prefix: &str, n: u64) {
        let p = self.prefix_index(prefix);
        self.prefixes[p].counter = n;
    }

    /// Every registration in order, as a snapshot lists them.
    pub(crate) fn entries(&self) -> Vec<AliasEntry> {
        self.records
            .iter()
            .filter(|r| r.prefix != DEAD)
            .map(|r| AliasEntry {
                prefix: self.prefixes[usize::from(r.prefix)].name.clone(),
                alias: self.alias_text(r),
                uuid: uuid_text(&r.uuid),
            })
            .collect()
    }

    fn insert(&mut self, prefix: usize, uuid: [u8; 16], number: u64) {
        // A conversation holds far fewer than 2^32 aliases (its limit says so).
        let index = u32::try_from(self.records.len()).unwrap_or(NO_RECORD - 1);
        let prefix_id = u16::try_from(prefix).unwrap_or(DEAD - 1);
        let (used, seq) = self.next_use();
        // Most namespaces hold a few aliases: grow a small table a few
        // records at a time rather than doubling it (16 slots for 9
        // aliases), so an idle one costs what it holds.
        if self.records.len() == self.records.capacity() && self.records.len() < SMALL_TABLE {
            self.records.reserve_exact(SMALL_TABLE_STEP);
        }
        self.records.push(Record {
            uuid,
            number,
            prefix: prefix_id,
            next: NO_RECORD,
            used,
            seq,
        });
        match self.first_record(&uuid) {
            None => self.set_first_record(uuid, index),
            Some(first) => {
                let mut at = first as usize;
                while self.records[at].next != NO_RECORD {
                    at = self.records[at].next as usize;
                }
                self.records[at].next = index;
            }
        }
        self.prefixes[prefix].set(number, index);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    fn uuid(n: u64) -> String {
        format!("{n:08x}-0000-4000-8000-000000000000")
    }

    /// Issue 39: numbers far apart were kept in the sparse map, and a later
    /// number that grew the dense table over them hid them (learn 5000,
    /// then 4000, then 8000: 5000 no longer resolved).
    /// The UUID index names records by number and finds them by the UUID
    /// they hold: it must follow records taken back and records moved.
    #[test]
    fn the_uuid_index_follows_a_rollback_and_a_compaction() {
        let mut table = AliasTable::default();
        table.register("link", uuid(0));
        table.register("theme", uuid(0));
        table.register("link", uuid(1));
        let checkpoint = table.checkpoint();
        table.register("link", uuid(2));
        table.register("page", uuid(1));
        table.register("page", uuid(3));
        table.rollback(checkpoint);
        assert!(!table.knows_uuid(&uuid(2)));
        assert!(!table.knows_uuid(&uuid(3)));
        assert_eq!(table.aliases_of_uuid(&uuid(1)), ["link-2"]);
        assert_eq!(table.aliases_of_uuid(&uuid(0)), ["link-1", "theme-1"]);
        assert_eq!(table.register("link", uuid(2)), "link-3");
        assert_eq!(table.register("page", uuid(1)), "page-1");

        // Forgetting most of 200 compacts the records: every index entry
        // moves.
        for n in 10..210 {
            table.register("bulk", uuid(n));
        }
        for n in 1..=150 {
            table.forget_alias(&format!("bulk-{n}"));
        }
        for n in 10..160 {
            assert!(!table.knows_uuid(&uuid(n)), "{n}");
        }
        for n in 160..210 {
            assert_eq!(
                table.alias_of("bulk", &uuid(n)),
                Some(format!("bulk-{}", n - 9))
            );
        }
        assert_eq!(table.aliases_of_uuid(&uuid(0)), ["link-1", "theme-1"]);
        assert_eq!(table.aliases_of_uuid(&uuid(1)), ["link-2", "page-1"]);
        assert_eq!(table.uuid_of("link-3"), Some(uuid(2)));
    }

    #[test]
    fn a_dense_table_that_grows_over_sparse_numbers_keeps_them() {
        let mut table = AliasTable::default();
        for n in [5000, 4000, 8000, 12_000, 4500] {
            assert!(table.learn("link", uuid(n), format!("link-{n}")));
        }
        for n in [5000, 4000, 8000, 12_000, 4500] {
            assert_eq!(
                table.uuid_of(&format!("link-{n}")),
                Some(uuid(n)),
                "link-{n}"
            );
        }
        assert_eq!(table.entries().len(), 5);
        assert!(!table.is_expired("link-5000"));
        assert!(table.is_expired("link-4999"));
    }

    /// Issue 39: the order of last use saturated at `u32::MAX`, after which
    /// every use tied and least recently used was decided by position.
    #[test]
    fn least_recently_used_stays_exact_past_the_top_of_the_use_counter() {
        let mut table = AliasTable::default();
        for n in 1..=3 {
            table.register("link", uuid(n));
        }
        table.set_last_use(u32::MAX - 1);
        // used last to first: link-3 is now the least recently used
        for alias in ["link-3", "link-2", "link-1"] {
            table.touch_alias(alias);
        }
        let checkpoint = table.checkpoint();
        assert!(table.evict_least_recently_used(1, &checkpoint));
        assert_eq!(
            table.uuid_of("link-3"),
            None,
            "the least recently used goes"
        );
        assert!(table.uuid_of("link-1").is_some() && table.uuid_of("link-2").is_some());
        // and a checkpoint near the top renumbers before a batch begins
        table.set_last_use(u32::MAX - 1);
        table.touch_alias("link-2");
        let checkpoint = table.checkpoint();
        table.register("link", uuid(4));
        assert!(table.evict_least_recently_used(1, &checkpoint));
        assert_eq!(table.uuid_of("link-1"), None);
        assert!(table.uuid_of("link-2").is_some() && table.uuid_of("link-4").is_some());
    }

    #[test]
    fn lost_numbers_are_never_resolved_learnt_or_given_again() {
        let mut table = AliasTable::default();
        table.enter_epoch(Some("e1"), false);
        assert!(table.learn("book", uuid(1), "book-1".into()));
        assert!(table.learn("book", uuid(2), "book-2".into()));
        table.mark_lost("book-2");
        assert!(table.is_lost("book-2") && !table.is_expired("book-2"));
        assert!(!table.learn("book", uuid(3), "book-2".into()));
        assert!(!table.learn("book", uuid(2), "book-2".into()));
        assert!(
            !table.learn("book", uuid(3), "book-1".into()),
            "held for another UUID"
        );
        table.raise_counter("book", 5);
        assert!((3..=5).all(|n| table.is_lost(&format!("book-{n}"))));
        assert_eq!(table.register("book", uuid(9)), "book-6");
        // an epoch change seen by a fresh copy: all it saw is lost
        table.enter_epoch(Some("e2"), true);
        assert!(table.is_lost("book-1") && table.is_lost("book-6"));
        assert_eq!(table.floor().counters, [("book".to_owned(), 6)]);
        // a stale copy starts over
        table.enter_epoch(Some("e3"), false);
        assert!(!table.is_lost("book-1"));
        assert!(table.floor().counters.is_empty());
    }

    /// One step of the property test.
    #[derive(Debug, Clone)]
    enum Op {
        /// Register UUID `u` under prefix `p`.
        Register(usize, u64),
        /// Learn that the store gave number `n` of prefix `p` to `u`.
        Learn(usize, u64, u64),
        /// The store no longer holds number `n` of prefix `p`.
        Forget(usize, u64),
        /// The store lost number `n` of prefix `p`.
        Lose(usize, u64),
        /// A caller has seen prefix `p` up to `n`.
        Raise(usize, u64),
        /// Use number `n` of prefix `p`.
        Touch(usize, u64),
        /// Make room for `k` by evicting the least recently used.
        Evict(usize),
        /// Save and restore through a snapshot's entries and counters.
        Snapshot,
    }

    const PREFIXES: [&str; 2] = ["link", "step"];

    fn op() -> impl Strategy<Value = Op> {
        let p = 0..PREFIXES.len();
        prop_oneof![
            4 => (p.clone(), 0..12u64).prop_map(|(p, u)| Op::Register(p, u)),
            2 => (p.clone(), 0..12u64, 1..16u64).prop_map(|(p, u, n)| Op::Learn(p, u, n)),
            1 => (p.clone(), 1..16u64).prop_map(|(p, n)| Op::Forget(p, n)),
            1 => (p.clone(), 1..16u64).prop_map(|(p, n)| Op::Lose(p, n)),
            1 => (p.clone(), 1..20u64).prop_map(|(p, n)| Op::Raise(p, n)),
            2 => (p.clone(), 1..16u64).prop_map(|(p, n)| Op::Touch(p, n)),
            1 => (0..4usize).prop_map(Op::Evict),
            1 => Just(Op::Snapshot),
        ]
    }

    /// The table as plainly as it can be said: who holds each number, the
    /// counters, the lost numbers, and the order of last use.
    #[derive(Debug, Default)]
    struct Model {
        held: BTreeMap<(usize, u64), u64>,
        counters: [u64; 2],
        lost: BTreeSet<(usize, u64)>,
        /// Held numbers, least recently used first.
        uses: Vec<(usize, u64)>,
    }

    impl Model {
        fn number_of(&self, p: usize, u: u64) -> Option<u64> {
            self.held
                .iter()
                .find(|(key, held)| key.0 == p && **held == u)
                .map(|(key, _)| key.1)
        }

        fn use_now(&mut self, key: (usize, u64)) {
            self.uses.retain(|k| *k != key);
            self.uses.push(key);
        }

        fn drop_number(&mut self, key: (usize, u64)) {
            self.held.remove(&key);
            self.uses.retain(|k| *k != key);
        }

        fn register(&mut self, p: usize, u: u64) -> u64 {
            if let Some(n) = self.number_of(p, u) {
                self.use_now((p, n));
                return n;
            }
            let mut n = self.counters[p] + 1;
            while self.held.contains_key(&(p, n)) || self.lost.contains(&(p, n)) {
                n += 1;
            }
            self.counters[p] = n;
            self.held.insert((p, n), u);
            self.use_now((p, n));
            n
        }

        fn learn(&mut self, p: usize, u: u64, n: u64) -> bool {
            if let Some(&v) = self.held.get(&(p, n)) {
                return v == u;
            }
            if self.lost.contains(&(p, n)) {
                return false;
            }
            if let Some(old) = self.number_of(p, u) {
                self.drop_number((p, old));
            }
            self.held.insert((p, n), u);
            self.use_now((p, n));
            self.counters[p] = self.counters[p].max(n);
            true
        }
    }

    fn alias(p: usize, n: u64) -> String {
        format!("{}-{n}", PREFIXES[p])
    }

    fn check(table: &AliasTable, model: &Model) -> Result<(), TestCaseError> {
        let entries: BTreeSet<(String, String)> = table
            .entries()
            .into_iter()
            .map(|e| (e.alias, e.uuid))
            .collect();
        let expected: BTreeSet<(String, String)> = model
            .held
            .iter()
            .map(|(&(p, n), &u)| (alias(p, n), uuid(u)))
            .collect();
        prop_assert_eq!(entries, expected);
        for (p, prefix) in PREFIXES.iter().enumerate() {
            let counter = table.counters().get(*prefix).copied().unwrap_or(0);
            prop_assert_eq!(counter, model.counters[p], "counter of {}", prefix);
            for n in 1..22 {
                let a = alias(p, n);
                let held = model.held.get(&(p, n)).map(|&u| uuid(u));
                prop_assert_eq!(table.uuid_of(&a), held.clone(), "{}", a);
                let lost = model.lost.contains(&(p, n));
                prop_assert_eq!(table.is_lost(&a), lost, "lost {}", a);
                let expired = held.is_none() && !lost && n <= model.counters[p];
                prop_assert_eq!(table.is_expired(&a), expired, "expired {}", a);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The table against the model over random orders of register,
        /// learn, expire, lose, raise, use, evict and snapshot; and a number
        /// the table gives out itself is one it has never seen before.
        #[test]
        fn the_table_behaves_as_its_model(ops in proptest::collection::vec(op(), 1..60)) {
            let mut table = AliasTable::default();
            let mut model = Model::default();
            let mut seen: BTreeSet<(usize, u64)> = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Register(p, u) => {
                        let fresh = model.number_of(p, u).is_none();
                        let got = table.register(PREFIXES[p], uuid(u));
                        let n = model.register(p, u);
                        prop_assert_eq!(&got, &alias(p, n));
                        prop_assert!(!(fresh && seen.contains(&(p, n))), "{} given out twice", got);
                        seen.insert((p, n));
                    }
                    Op::Learn(p, u, n) => {
                        let accepted = table.learn(PREFIXES[p], uuid(u), alias(p, n));
                        prop_assert_eq!(accepted, model.learn(p, u, n));
                        seen.insert((p, n));
                    }
                    Op::Forget(p, n) => {
                        table.forget_alias(&alias(p, n));
                        model.drop_number((p, n));
                    }
                    Op::Lose(p, n) => {
                        seen.insert((p, n));
                        table.mark_lost(&alias(p, n));
                        model.drop_number((p, n));
                        model.lost.insert((p, n));
                        model.counters[p] = model.counters[p].max(n);
                    }
                    Op::Raise(p, n) => {
                        seen.extend((1..=n).map(|m| (p, m)));
                        table.raise_counter(PREFIXES[p], n);
                        if n > model.counters[p] {
                            model.lost.extend((model.counters[p] + 1..=n).map(|m| (p, m)));
                            model.counters[p] = n;
                        }
                    }
                    Op::Touch(p, n) => {
                        table.touch_alias(&alias(p, n));
                        if model.held.contains_key(&(p, n)) {
                            model.use_now((p, n));
                        }
                    }
                    Op::Evict(k) => {
                        let checkpoint = table.checkpoint();
                        let done = table.evict_least_recently_used(k, &checkpoint);
                        prop_assert_eq!(done, model.uses.len() >= k);
                        if done {
                            for key in model.uses.drain(..k).collect::<Vec<_>>() {
                                model.held.remove(&key);
                            }
                        }
                    }
                    Op::Snapshot => {
                        let (entries, counters) = (table.entries(), table.counters());
                        let mut restored = AliasTable::default();
                        for entry in entries {
                            prop_assert!(restored.learn(&entry.prefix, entry.uuid, entry.alias));
                        }
                        for (prefix, n) in counters {
                            restored.set_counter(&prefix, n);
                        }
                        table = restored;
                        // a snapshot keeps what is held and the counters,
                        // not lost numbers, and its order of use is its
                        // order of registration
                        model.lost.clear();
                        let mut order: Vec<(usize, u64)> = Vec::new();
                        for e in table.entries() {
                            let p = PREFIXES.iter().position(|q| *q == e.prefix).unwrap_or(0);
                            let n = proto_ai_tools_schema::names::split_alias(&e.alias).map_or(0, |(_, n)| n);
                            order.push((p, n));
                        }
                        model.uses = order;
                    }
                }
                check(&table, &model)?;
            }
        }
    }
}
