//! One conversation's aliases as data: compact records, a UUID index and a
//! number table per prefix. No locking, no store, no policy (limits are the
//! manager's and the stores'); the alias manager's local copy and the
//! in-memory store both keep their conversations in one.

use std::collections::{BTreeMap, HashMap};

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

/// One conversation's aliases, compactly: one 32-byte record per
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
    /// prefixes) chain through `Record::next`.
    by_uuid: HashMap<[u8; 16], u32>,
}

/// One registration: `prefix-number` stands for `uuid`.
#[derive(Debug, Clone, Copy)]
struct Record {
    uuid: [u8; 16],
    number: u64,
    prefix: u16,
    /// The next record of the same UUID, or [`NO_RECORD`].
    next: u32,
}

const NO_RECORD: u32 = u32::MAX;

/// A point an [`AliasTable`] can return to (see [`AliasTable::rollback`]).
pub(crate) struct Checkpoint {
    records: usize,
    counters: Vec<u64>,
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
    sparse: HashMap<u64, u32>,
}

impl PrefixTable {
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
    /// Drops the local copy when it was learnt in another epoch of the conversation.
    pub(crate) fn enter_epoch(&mut self, epoch: Option<&str>) {
        if self.epoch.as_deref() != epoch {
            *self = AliasTable {
                epoch: epoch.map(str::to_owned),
                ..AliasTable::default()
            };
        }
    }

    /// Records an alias the store gave out (no limit: the store enforces it).
    pub(crate) fn learn(&mut self, prefix: &str, uuid: String, alias: String) {
        let Some((alias_prefix, n)) = ai_tools_schema::names::split_alias(&alias) else {
            return;
        };
        if alias_prefix != prefix || n == 0 {
            return;
        }
        if self.lookup_alias(&alias).is_some() || self.alias_of(prefix, &uuid).is_some() {
            return;
        }
        let Some(bytes) = uuid_bytes(&uuid) else {
            return;
        };
        let p = self.prefix_index(prefix);
        let table = &mut self.prefixes[p];
        table.counter = table.counter.max(n);
        self.insert(p, bytes, n);
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
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
        ai_tools_schema::names::alias(
            &self.prefixes[usize::from(record.prefix)].name,
            record.number,
        )
    }

    /// The prefix and UUID of an alias (exactly as written: lowercase).
    pub(crate) fn lookup_alias(&self, alias: &str) -> Option<(&str, String)> {
        let (prefix, n) = ai_tools_schema::names::split_alias(alias)?;
        let table = &self.prefixes[self.find_prefix(prefix)?];
        let record = &self.records[table.record_of(n)? as usize];
        Some((table.name.as_str(), uuid_text(&record.uuid)))
    }

    pub(crate) fn uuid_of(&self, alias: &str) -> Option<String> {
        self.lookup_alias(alias).map(|(_, uuid)| uuid)
    }

    /// The records of `uuid`, first registered first.
    fn records_of(&self, uuid: &[u8; 16]) -> impl Iterator<Item = &Record> {
        let mut next = self.by_uuid.get(uuid).copied().unwrap_or(NO_RECORD);
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
        uuid_bytes(uuid).is_some_and(|bytes| self.by_uuid.contains_key(&bytes))
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
        if let Some(p) = self.find_prefix(prefix)
            && let Some(record) = self.records_of(&bytes).find(|r| usize::from(r.prefix) == p)
        {
            let number = record.number;
            ai_tools_schema::names::write_alias(out, &self.prefixes[p].name, number);
            return;
        }
        let p = self.prefix_index(prefix);
        let table = &self.prefixes[p];
        let mut n = table.counter.saturating_add(1);
        // A restored snapshot may have been edited by hand; never reuse an alias.
        while table.record_of(n).is_some() {
            n = n.saturating_add(1);
        }
        self.prefixes[p].counter = n;
        self.insert(p, bytes, n);
        ai_tools_schema::names::write_alias(out, prefix, n);
    }

    /// What [`rollback`](Self::rollback) returns to.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            records: self.records.len(),
            counters: self.prefixes.iter().map(|t| t.counter).collect(),
        }
    }

    /// Forgets every registration since `checkpoint` (they are the last
    /// records, so each is the end of its UUID's chain).
    pub(crate) fn rollback(&mut self, checkpoint: Checkpoint) {
        while self.records.len() > checkpoint.records {
            let Some(record) = self.records.pop() else {
                break;
            };
            let index = u32::try_from(self.records.len()).unwrap_or(NO_RECORD - 1);
            if self.by_uuid.get(&record.uuid) == Some(&index) {
                self.by_uuid.remove(&record.uuid);
            } else if let Some(before) = self.records.iter_mut().find(|r| r.next == index) {
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
        let prefix_id = u16::try_from(prefix).unwrap_or(u16::MAX);
        self.records.push(Record {
            uuid,
            number,
            prefix: prefix_id,
            next: NO_RECORD,
        });
        match self.by_uuid.get(&uuid).copied() {
            None => {
                self.by_uuid.insert(uuid, index);
            }
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
