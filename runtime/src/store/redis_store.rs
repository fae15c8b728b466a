//! An [`AliasStore`] in Redis, shared by replicas and kept across restarts:
//! on one server, or (feature `redis-cluster`) on a Redis Cluster.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
#[cfg(feature = "redis-cluster")]
use ::redis::cluster_async::ClusterConnection;
use ::redis::{Cmd, ErrorKind, Pipeline, RedisError, Script, ServerErrorKind, Value};

use super::in_sync::InSync;
use super::replication::{Replication, malformed};
use super::{
    AliasStore, AssignError, Assignment, Floor, Lookup, StoreError, new_epoch, number_of, prefix_of,
};
use crate::transport::BoxFuture;

/// The Lua both scripts start with: `forget(alias)` drops an alias from
/// the conversation (KEYS: aliases, uuids, meta, used), `expire(now,
/// idle)` forgets every alias unused for more than `idle` ms (none when
/// `idle` is 0: the store does not expire aliases), and `floor(epoch,
/// caller, first, count)` applies a caller's [`Floor`]: `count` pairs
/// `prefix, number` from `ARGV[first]` raise the prefixes' counters, the
/// numbers skipped kept as lost (`#lost:PREFIX` in meta, `first-last`
/// ranges), and a conversation held no more takes the caller's epoch.
/// `is_lost(prefix, n)` reads those ranges.
macro_rules! expire_lua {
    () => {
        r"
local function forget(a)
  local u = redis.call('HGET', KEYS[1], a)
  redis.call('ZREM', KEYS[4], a)
  if not u then return end
  redis.call('HDEL', KEYS[1], a)
  local list = redis.call('HGET', KEYS[2], u)
  if list then
    local kept = {}
    for x in string.gmatch(list, '%S+') do
      if x ~= a then kept[#kept + 1] = x end
    end
    if #kept == 0 then
      redis.call('HDEL', KEYS[2], u)
    else
      redis.call('HSET', KEYS[2], u, table.concat(kept, ' '))
    end
  end
  redis.call('HINCRBY', KEYS[3], '#len', -1)
end
local function is_lost(p, n)
  local ranges = redis.call('HGET', KEYS[3], '#lost:' .. p)
  if not ranges then return false end
  for first, last in string.gmatch(ranges, '(%d+)-(%d+)') do
    if n >= tonumber(first) and n <= tonumber(last) then return true end
  end
  return false
end
local function floor(epoch, caller, first, count)
  if caller == '' or count == 0 then return epoch end
  if not epoch then
    epoch = caller
    redis.call('HSET', KEYS[3], '#epoch', epoch)
  end
  for i = first, first + 2 * count - 1, 2 do
    local p, seen = ARGV[i], tonumber(ARGV[i + 1])
    local last = tonumber(redis.call('HGET', KEYS[3], p) or '0')
    if seen > last then
      local f = '#lost:' .. p
      local ranges = redis.call('HGET', KEYS[3], f)
      local range = (last + 1) .. '-' .. seen
      if ranges then range = ranges .. ' ' .. range end
      redis.call('HSET', KEYS[3], f, range)
      redis.call('HSET', KEYS[3], p, seen)
    end
  end
  return epoch
end
local function expire(now, idle)
  if idle <= 0 then return end
  for _, a in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. (now - idle))) do
    forget(a)
  end
end
"
    };
}

/// Get-or-assign a batch, atomically, all or nothing under the limit; with
/// an alias idle time, the least recently used aliases outside the batch
/// are evicted to make room instead (too few of them refuses the batch),
/// and every alias of the batch is marked used now.
///
/// KEYS: aliases, uuids, meta, used. ARGV: ttl (ms), limit, a fresh epoch,
/// now (ms), alias idle (ms, 0 for none), the caller's epoch (empty for
/// none), the number `k` of floor pairs, the `k` pairs `prefix, number`,
/// then `prefix, uuid` pairs (distinct). Returns `{epoch, alias…}`, or
/// `{'#limit'}` with nothing written but the floor.
const ASSIGN: &str = concat!(
    expire_lua!(),
    r"
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
local idle = tonumber(ARGV[5])
local floors = tonumber(ARGV[7])
local ids = 8 + 2 * floors
expire(now, idle)
local epoch = floor(redis.call('HGET', KEYS[3], '#epoch'), ARGV[6], 8, floors)
local out = {}
local new = 0
for i = ids, #ARGV, 2 do
  local p, u = ARGV[i], ARGV[i + 1]
  local found = false
  local list = redis.call('HGET', KEYS[2], u)
  if list then
    for a in string.gmatch(list, '%S+') do
      if string.sub(a, 1, #p + 1) == p .. '-' then
        found = a
        break
      end
    end
  end
  out[#out + 1] = found
  if not found then new = new + 1 end
end
if new > 0 then
  local len = tonumber(redis.call('HGET', KEYS[3], '#len') or '0')
  if len + new > limit then
    if idle <= 0 or new > limit then
      return {'#limit'}
    end
    local batch = {}
    for k = 1, #out do
      if out[k] then batch[out[k]] = true end
    end
    local excess = len + new - limit
    local gone = {}
    for _, a in ipairs(redis.call('ZRANGE', KEYS[4], 0, excess + #out - 1)) do
      if #gone >= excess then break end
      if not batch[a] then gone[#gone + 1] = a end
    end
    if #gone < excess then
      return {'#limit'}
    end
    for _, a in ipairs(gone) do forget(a) end
  end
  if not epoch then
    epoch = ARGV[3]
    redis.call('HSET', KEYS[3], '#epoch', epoch)
  end
  for k = 1, #out do
    if not out[k] then
      local p, u = ARGV[ids - 2 + 2 * k], ARGV[ids - 1 + 2 * k]
      local n = redis.call('HINCRBY', KEYS[3], p, 1)
      while redis.call('HEXISTS', KEYS[1], p .. '-' .. n) == 1 do
        n = redis.call('HINCRBY', KEYS[3], p, 1)
      end
      local a = p .. '-' .. n
      redis.call('HSET', KEYS[1], a, u)
      local list = redis.call('HGET', KEYS[2], u)
      if list then list = list .. ' ' .. a else list = a end
      redis.call('HSET', KEYS[2], u, list)
      out[k] = a
    end
  end
  redis.call('HINCRBY', KEYS[3], '#len', new)
end
if idle > 0 then
  for k = 1, #out do redis.call('ZADD', KEYS[4], now, out[k]) end
end
if epoch then
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
local res = {epoch or false}
for k = 1, #out do res[#res + 1] = out[k] end
return res
"
);

/// Look up a batch of aliases and UUIDs; with an alias idle time, what is
/// found is marked used now.
///
/// KEYS: aliases, uuids, meta, used. ARGV: ttl (ms), the number of aliases,
/// now (ms), alias idle (ms, 0 for none), the caller's epoch (empty for
/// none), the number `k` of floor pairs, the `k` pairs `prefix, number`,
/// the aliases, then the UUIDs. Returns `{epoch|nil, uuid|nil…,
/// aliases|nil…, flag…}`, a flag per alias: `2` lost (in a lost range),
/// `1` expired (not held, and numbered at most the last number given out
/// under its prefix), `0` otherwise.
const LOOKUP: &str = concat!(
    expire_lua!(),
    r"
local now = tonumber(ARGV[3])
local idle = tonumber(ARGV[4])
local floors = tonumber(ARGV[6])
local base = 7 + 2 * floors
expire(now, idle)
local epoch = floor(redis.call('HGET', KEYS[3], '#epoch'), ARGV[5], 7, floors)
local res = {epoch or false}
local na = tonumber(ARGV[2])
for i = base, base - 1 + na do
  local u = redis.call('HGET', KEYS[1], ARGV[i])
  res[#res + 1] = u
  if u and idle > 0 then redis.call('ZADD', KEYS[4], 'XX', now, ARGV[i]) end
end
for i = base + na, #ARGV do
  local list = redis.call('HGET', KEYS[2], ARGV[i])
  res[#res + 1] = list
  if list and idle > 0 then
    for a in string.gmatch(list, '%S+') do redis.call('ZADD', KEYS[4], 'XX', now, a) end
  end
end
for i = base, base - 1 + na do
  local flag = '0'
  if not res[i - base + 2] then
    local p, n = string.match(ARGV[i], '^(.+)%-([1-9]%d*)$')
    if p then
      local last = tonumber(redis.call('HGET', KEYS[3], p) or '0')
      n = tonumber(n)
      if is_lost(p, n) then
        flag = '2'
      elseif n >= 1 and n <= last then
        flag = '1'
      end
    end
  end
  res[#res + 1] = flag
end
if epoch then
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[1])) end
end
return res
"
);

/// Settings of a [`RedisStore`].
///
/// # Examples
///
/// ```
/// let mut options = proto_ai_tools::store::RedisStoreOptions::default();
/// options.key_prefix = "my-agent".into();
/// options.ttl = std::time::Duration::from_secs(24 * 3600);
/// options.wait_for_replicas = 1; // an alias reaches the model only once a replica holds it
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisStoreOptions {
    /// The first part of every key (default `ai-tools`); see [`RedisStore`].
    /// On a cluster it must not contain `{` or `}` (the conversation's hash
    /// tag follows it).
    pub key_prefix: String,
    /// How long a conversation is kept after its last use (default 24 hours).
    pub ttl: Duration,
    /// How long one request may wait for its answer (default 2 s); past it
    /// the tool call fails with "the alias store is unavailable". On a
    /// cluster this bounds the whole request, redirections and retries
    /// included.
    pub response_timeout: Duration,
    /// How long connecting may take (default 2 s).
    pub connection_timeout: Duration,
    /// One server: reconnection attempts after the connection drops, with
    /// exponential backoff from 100 ms (default 3). A request made while the
    /// server is down fails at once; the connection comes back by itself.
    pub reconnect_retries: usize,
    /// A cluster: how often one request may be sent again after a `MOVED` or
    /// `ASK` redirection, a `TRYAGAIN` (a slot half-way through a
    /// migration), a `CLUSTERDOWN` or a dropped connection (default 16).
    /// Redirections are followed at once; before the n-th retry after a
    /// `TRYAGAIN` or `CLUSTERDOWN` the request waits a random 5 ms to
    /// 10 · 2ⁿ ms (at most 500 ms). All of it within
    /// [`response_timeout`](Self::response_timeout).
    pub cluster_retries: usize,
    /// How many replicas must hold newly given-out aliases before the model
    /// sees them (Redis `WAIT`, sent in the same round trip as the
    /// registration; default 0: none). With 1 or more, a failover that
    /// promotes one of those replicas loses no alias the model was shown;
    /// when fewer replicas acknowledge within the
    /// [`wait_timeout`](Self::wait_timeout) (default half the
    /// [`response_timeout`](Self::response_timeout)), the registration is an
    /// error ("the alias store is unavailable") and the answer is withheld.
    /// While the replicas lag, the requests sharing the node's connection
    /// wait with them.
    pub wait_for_replicas: usize,
    /// Wait instead for every replica in sync with the master that holds
    /// the conversation (default `false`): Kafka's `acks=all` over the
    /// in-sync set. On a cluster the set is every replica `CLUSTER NODES`
    /// lists for the master, those marked failed included while Redis may
    /// still promote them once they are back (`cluster-node-timeout` ×
    /// `cluster-replica-validity-factor` + `repl-ping-replica-period`
    /// since they were first seen failed; 160 s with Redis's defaults), so
    /// a replica that lags or is cut off holds registrations back, as with
    /// [`wait_for_replicas`](Self::wait_for_replicas), and one that is
    /// gone for good does for that window only; on one server, the
    /// replicas `INFO replication` lists online. A
    /// master promoted in place of a failed one has no replica until its
    /// old master is back as one. A master left without a replica
    /// (its only replica promoted when it failed) keeps giving out aliases,
    /// held by it alone, said as a WARN at most every 30 s and counted by
    /// [`RedisStore::registrations_without_replica`], instead of failing
    /// every registration on it: the first registration on such a master
    /// waits out the [`wait_timeout`](Self::wait_timeout) once, the next
    /// ones do not wait. The topology is asked again when a wait falls
    /// short (at most once a second) and every 5 s while registrations
    /// come. With it, `wait_for_replicas` is not used.
    pub wait_for_in_sync_replicas: bool,
    /// How long an alias may go unused before it expires (default `None`:
    /// aliases live as long as their conversation). With a value, each
    /// alias's last use is kept (a sorted set, the fourth key), one unused
    /// longer is forgotten, and at the limit the least recently used are
    /// evicted instead of the registration failing (see
    /// [`AliasStore::assign`]): the store of long-lived namespaces, such as
    /// an MCP caller's scope. Numbers are still never given out twice, so an
    /// expired alias is told apart from an invented one. Replicas' clocks
    /// should agree to well within this.
    pub alias_idle: Option<Duration>,
    /// How long the server may hold a registration's `WAIT` for
    /// [`wait_for_replicas`](Self::wait_for_replicas) (default `None`: half
    /// the [`response_timeout`](Self::response_timeout)). The round trip
    /// stays bounded by the response timeout, so a wait as long as it or
    /// longer fails as a store that does not answer: keep it below.
    pub wait_timeout: Option<Duration>,
}

impl Default for RedisStoreOptions {
    fn default() -> Self {
        Self {
            key_prefix: "ai-tools".to_owned(),
            ttl: Duration::from_secs(24 * 3600),
            response_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(2),
            reconnect_retries: 3,
            cluster_retries: 16,
            wait_for_replicas: 0,
            wait_for_in_sync_replicas: false,
            alias_idle: None,
            wait_timeout: None,
        }
    }
}

/// An [`AliasStore`] in Redis (feature `redis`): conversations shared by
/// every replica that connects to the same server — or, with the
/// `redis-cluster` feature, the same Redis Cluster — kept across restarts,
/// forgotten after an idle TTL.
///
/// # Keys
///
/// Three hashes per conversation (and, with an alias idle time, a sorted
/// set), their names built from
/// [`key_prefix`](RedisStoreOptions::key_prefix) (default `ai-tools`) and
/// the conversation id in braces, a Redis Cluster *hash tag*, so that one
/// conversation's keys share a slot and one script may touch them all:
///
/// | key | field → value |
/// |---|---|
/// | `ai-tools:{CONVERSATION}:aliases` | `link-3` → its UUID |
/// | `ai-tools:{CONVERSATION}:uuids` | UUID → its aliases, space-separated, in the order given out (`link-3 theme-1`) |
/// | `ai-tools:{CONVERSATION}:meta` | `link` → the last number given out under `link`; `#len` → aliases held; `#epoch` → the id of this life of the conversation |
/// | `ai-tools:{CONVERSATION}:used` | with [`alias_idle`](RedisStoreOptions::alias_idle): alias → when it was last used (ms since the Unix epoch) |
///
/// Every request that touches a conversation sets the TTL of all its keys
/// again (`PEXPIRE`). With an alias idle time, each script first forgets
/// the aliases unused for longer, and at the limit evicts the least
/// recently used; the counters in `meta` never go back, so a number is
/// never given out twice while the conversation lives. An alias is given out by a Lua script that looks
/// up every id of the batch and assigns the missing ones (`HINCRBY` on the
/// prefix's counter) in one atomic step: two replicas registering the same
/// UUID at once get one alias, and two UUIDs never share one. Each tool call
/// costs one round trip to resolve its arguments (`EVALSHA` of a lookup
/// script) and one to register the ids of its answer; an unknown alias in
/// the arguments costs one more (`HKEYS`) to name the valid ones. A server
/// that lost the scripts (a restart, a new node) answers `NOSCRIPT`, and
/// that request is sent once more as `EVAL` with the script's text.
///
/// # Redis Cluster
///
/// `RedisStore::connect_cluster` (feature `redis-cluster`) speaks to a
/// cluster with the same keys, scripts and round trips. Each request goes to
/// the master that owns its conversation's slot, and follows `MOVED` (the
/// slot moved: the client learns the new owner) and `ASK` (the slot is being
/// migrated and the conversation's keys are already on the target) answers.
/// While a migration has moved some of one conversation's keys but not all,
/// the nodes answer `TRYAGAIN`, and the request is sent again after a short
/// random, doubling wait (see [`cluster_retries`](RedisStoreOptions::cluster_retries)),
/// all within [`response_timeout`](RedisStoreOptions::response_timeout).
/// A script runs whole on one node or not at all, so a resharding never
/// splits an assignment: no alias is lost and no UUID gets two. Sending a
/// registration again after a lost answer is safe: the second run finds
/// the aliases the first gave out. Replication is asynchronous: for a
/// master's crash see [`wait_for_replicas`](RedisStoreOptions::wait_for_replicas).
///
/// # Examples
///
/// ```no_run
/// use std::{sync::Arc, time::Duration};
/// use proto_ai_tools::{Sessions, store::RedisStore};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisStore::connect("redis://127.0.0.1:6379").await?;
/// let sessions = Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(store));
/// let aliases = sessions.alias_manager("conversation-42");
/// aliases.register_all(&[("link", "d290f1ee-6c54-4b01-90e6-d701748f0851")]).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    connection: Connection,
    options: Arc<RedisStoreOptions>,
    assign: Arc<Lua>,
    lookup: Arc<Lua>,
    round_trips: Arc<AtomicU64>,
    /// The in-sync replicas last known of each master
    /// ([`RedisStoreOptions::wait_for_in_sync_replicas`]).
    in_sync: Arc<InSync>,
    /// Registrations that no replica held when they were given out.
    without_replica: Arc<AtomicU64>,
}

/// One server, or a cluster.
#[derive(Clone)]
enum Connection {
    Node(ConnectionManager),
    #[cfg(feature = "redis-cluster")]
    Cluster(ClusterConnection),
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("cluster", &self.is_cluster())
            .field("options", &self.options)
            .field("round_trips", &self.round_trips())
            .finish_non_exhaustive()
    }
}

/// The waits between a cluster's retries (see
/// [`RedisStoreOptions::cluster_retries`]): at least 5 ms, at most
/// `10 · 2^retry` ms, never more than 500 ms.
#[cfg(feature = "redis-cluster")]
const CLUSTER_RETRY_WAIT_MS: (u64, u64, u64) = (5, 10, 500);

impl RedisStore {
    /// Connects to the server at `url` (`redis://host:port/db`) with the
    /// default [`RedisStoreOptions`].
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the URL is invalid or the server cannot be reached.
    ///
    /// # Examples
    ///
    /// See [`RedisStore`].
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, RedisStoreOptions::default()).await
    }

    /// Connects to the server at `url` with `options`, and loads the scripts.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the URL is invalid or the server cannot be reached.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), proto_ai_tools::store::StoreError> {
    /// let mut options = proto_ai_tools::store::RedisStoreOptions::default();
    /// options.key_prefix = "staging".into();
    /// let store = proto_ai_tools::store::RedisStore::connect_with("redis://127.0.0.1:6379", options).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_with(url: &str, options: RedisStoreOptions) -> Result<Self, StoreError> {
        let client = ::redis::Client::open(url).map_err(unavailable)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(options.response_timeout))
            .set_connection_timeout(Some(options.connection_timeout))
            .set_number_of_retries(options.reconnect_retries)
            .set_max_delay(Duration::from_secs(2));
        let connection = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(unavailable)?;
        let store = Self::new(Connection::Node(connection), options);
        for script in [&store.assign, &store.lookup] {
            store.load(script).await.map_err(unavailable)?;
        }
        Ok(store)
    }

    /// Connects to a Redis Cluster (feature `redis-cluster`) through any of
    /// `urls` (`redis://host:port`; one reachable node is enough, the client
    /// learns the others from it) with `options`, and loads the scripts on
    /// every node it knows (a node that misses them later costs one more
    /// round trip once, see [`RedisStore`]).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when `urls` is empty or holds an invalid URL, when
    /// [`key_prefix`](RedisStoreOptions::key_prefix) contains a brace, or
    /// when no node can be reached.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::{sync::Arc, time::Duration};
    /// use proto_ai_tools::{Sessions, store::{RedisStore, RedisStoreOptions}};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut options = RedisStoreOptions::default();
    /// options.wait_for_replicas = 1; // survive a master's crash
    /// let store = RedisStore::connect_cluster(
    ///     ["redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"],
    ///     options,
    /// )
    /// .await?;
    /// let sessions = Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(store));
    /// let aliases = sessions.alias_manager("conversation-42");
    /// aliases.register_all(&[("link", "d290f1ee-6c54-4b01-90e6-d701748f0851")]).await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "redis-cluster")]
    pub async fn connect_cluster<I>(urls: I, options: RedisStoreOptions) -> Result<Self, StoreError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let urls: Vec<String> = urls.into_iter().map(|u| u.as_ref().to_owned()).collect();
        if urls.is_empty() {
            return Err(StoreError::unavailable(
                "no Redis Cluster node URL was given",
            ));
        }
        if options.key_prefix.contains(['{', '}']) {
            return Err(StoreError::unavailable(format!(
                "the key prefix {:?} contains a brace, which would take the place of the conversation's hash tag on a Redis Cluster",
                options.key_prefix
            )));
        }
        let (min_wait, factor, max_wait) = CLUSTER_RETRY_WAIT_MS;
        let client = ::redis::cluster::ClusterClient::builder(urls)
            .connection_timeout(options.connection_timeout)
            .response_timeout(options.response_timeout)
            .overall_response_timeout(Some(options.response_timeout))
            .retries(u32::try_from(options.cluster_retries).unwrap_or(u32::MAX))
            .min_retry_wait(min_wait)
            .max_retry_wait(max_wait)
            .retry_wait_formula(factor, 2)
            .build()
            .map_err(unavailable)?;
        // the client's own connecting has no overall bound: give it one
        let limit = options.connection_timeout.saturating_mul(2);
        let connection = tokio::time::timeout(limit, client.get_async_connection())
            .await
            .map_err(|_| {
                StoreError::unavailable(format!("no Redis Cluster node answered within {limit:?}"))
            })?
            .map_err(unavailable)?;
        let store = Self::new(Connection::Cluster(connection), options);
        for script in [&store.assign, &store.lookup] {
            // Best effort: a node that misses a script answers NOSCRIPT and
            // gets it with the request (`eval`).
            let _ = store.load(script).await;
        }
        Ok(store)
    }

    fn new(connection: Connection, options: RedisStoreOptions) -> Self {
        Self {
            connection,
            options: Arc::new(options),
            assign: Arc::new(Lua::new(ASSIGN)),
            lookup: Arc::new(Lua::new(LOOKUP)),
            round_trips: Arc::new(AtomicU64::new(0)),
            in_sync: Arc::new(InSync::default()),
            without_replica: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Whether this store speaks to a Redis Cluster.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), proto_ai_tools::store::StoreError> {
    /// let store = proto_ai_tools::store::RedisStore::connect("redis://127.0.0.1:6379").await?;
    /// assert!(!store.is_cluster());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_cluster(&self) -> bool {
        match self.connection {
            Connection::Node(_) => false,
            #[cfg(feature = "redis-cluster")]
            Connection::Cluster(_) => true,
        }
    }

    /// The requests sent so far (each one round trip when nothing is
    /// redirected), connecting and script loading included. On a cluster,
    /// the redirections and retries the client follows inside one request
    /// are not counted: they happen only while slots move or nodes fail.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(store: proto_ai_tools::store::RedisStore) {
    /// let before = store.round_trips();
    /// // … one tool call …
    /// let per_call = store.round_trips() - before;
    /// # }
    /// ```
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// The options in force.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn f(store: proto_ai_tools::store::RedisStore) {
    /// assert_eq!(store.options().key_prefix, "ai-tools");
    /// # }
    /// ```
    pub fn options(&self) -> &RedisStoreOptions {
        &self.options
    }

    /// The keys of `conversation`: its aliases, UUIDs and meta hashes (see [`RedisStore`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn f(store: proto_ai_tools::store::RedisStore) {
    /// assert_eq!(store.keys("c1")[0], "ai-tools:{c1}:aliases");
    /// # }
    /// ```
    pub fn keys(&self, conversation: &str) -> [String; 4] {
        let p = &self.options.key_prefix;
        [
            format!("{p}:{{{conversation}}}:aliases"),
            format!("{p}:{{{conversation}}}:uuids"),
            format!("{p}:{{{conversation}}}:meta"),
            format!("{p}:{{{conversation}}}:used"),
        ]
    }

    /// The keys of `conversation`, checked: on a cluster its hash tag must
    /// not be empty, or its keys would hash to different slots.
    fn keys_checked(&self, conversation: &str) -> Result<[String; 4], StoreError> {
        if self.is_cluster() && (conversation.is_empty() || conversation.starts_with('}')) {
            return Err(StoreError::unavailable(format!(
                "the conversation id {conversation:?} cannot be kept on a Redis Cluster: its keys need a non-empty hash tag, so the id must not be empty or start with `}}`"
            )));
        }
        Ok(self.keys(conversation))
    }

    /// The alias idle time in ms, `0` for none; and now, in ms since the
    /// Unix epoch (the replicas' common clock).
    fn idle_and_now_ms(&self) -> (u64, u64) {
        let idle = self.options.alias_idle.map_or(0, |idle| {
            u64::try_from(idle.as_millis()).unwrap_or(u64::MAX).max(1)
        });
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        (idle, now)
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.options.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    async fn query(&self, cmd: &Cmd) -> Result<Value, RedisError> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        match &self.connection {
            Connection::Node(c) => cmd.query_async(&mut c.clone()).await,
            #[cfg(feature = "redis-cluster")]
            Connection::Cluster(c) => cmd.query_async(&mut c.clone()).await,
        }
    }

    /// A pipeline in one round trip; each command's answer or error.
    async fn query_pipeline(&self, pipe: &Pipeline) -> Result<Vec<Value>, RedisError> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        match &self.connection {
            Connection::Node(c) => pipe.query_async(&mut c.clone()).await,
            #[cfg(feature = "redis-cluster")]
            Connection::Cluster(c) => pipe.query_async(&mut c.clone()).await,
        }
    }

    async fn load(&self, script: &Lua) -> Result<(), RedisError> {
        let mut cmd = ::redis::cmd("SCRIPT");
        cmd.arg("LOAD").arg(script.code);
        self.query(&cmd).await.map(|_| ())
    }

    /// Runs `script` on the conversation's keys (`EVALSHA`; `EVAL` with the
    /// script's text when the server lost it: a restart, a node that never
    /// saw it). With `replicate`, and replicas to wait for, a `WAIT` follows
    /// in the same round trip.
    async fn eval(
        &self,
        script: &Lua,
        conversation: &str,
        args: &[&[u8]],
        replicate: bool,
    ) -> Result<Vec<Option<String>>, StoreError> {
        let keys = self.keys_checked(conversation)?;
        let in_sync = replicate && self.options.wait_for_in_sync_replicas;
        let replicas = match (replicate, in_sync) {
            (false, _) => 0,
            (true, true) => self.expected_in_sync(&keys[0]).await,
            (true, false) => self.options.wait_for_replicas,
        };
        let value = match self.run(script, true, &keys, args, replicas).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                self.run(script, false, &keys, args, replicas).await
            }
            other => other,
        }
        .map_err(unavailable)?;
        let (reply, acks) = value;
        let acks = acks.unwrap_or(0);
        let required = if in_sync {
            self.in_sync_now(&keys[0], replicas, acks).await
        } else {
            replicas
        };
        if acks < required {
            let option = if in_sync {
                "wait_for_in_sync_replicas"
            } else {
                "wait_for_replicas"
            };
            return Err(StoreError::unavailable(format!(
                "the new aliases reached {acks} of the {required} replica(s) required ({option}) within {} ms, so they are not given out",
                self.wait_ms()
            )));
        }
        ::redis::from_redis_value(reply).map_err(unavailable)
    }

    /// The replicas a registration on the master of `key` waits for with
    /// [`RedisStoreOptions::wait_for_in_sync_replicas`]: the in-sync set as
    /// the topology last said (asked now for a master not known yet), else 1.
    async fn expected_in_sync(&self, key: &str) -> usize {
        let cluster = self.is_cluster();
        if let Some(known) = self.in_sync.expected(cluster, key) {
            return known;
        }
        if self.in_sync.refresh_allowed() {
            self.learn_topology().await;
        }
        self.in_sync.expected(cluster, key).unwrap_or(1)
    }

    /// The replicas a registration that waited for `waited` and got
    /// `acks` needs: `waited`, or, when it fell short, the in-sync set as
    /// the topology says now (asked at once, at most once a second). A
    /// registration that no replica holds is counted and said (a WARN at
    /// most every 30 s); the topology is asked again every 5 s as
    /// registrations come, so a replica that joins is waited for.
    async fn in_sync_now(&self, key: &str, waited: usize, acks: usize) -> usize {
        let cluster = self.is_cluster();
        let required = if acks < waited {
            if self.in_sync.refresh_allowed() {
                self.learn_topology().await;
            }
            self.in_sync
                .expected(cluster, key)
                .map_or(waited, |now| now.min(waited))
        } else {
            if self.in_sync.refresh_due() {
                self.learn_topology().await;
            }
            waited
        };
        if required == 0 {
            self.without_replica.fetch_add(1, Ordering::Relaxed);
            if self.in_sync.warn_due() {
                tracing::warn!(
                    outcome = "without_replica",
                    registrations_without_replica = self.registrations_without_replica(),
                    "a master of the alias store has no replica in sync (its replica was promoted, failed, or never was), so the aliases it gives out are held by it alone until one joins: a crash of it loses them, and the model is told they are lost"
                );
            }
        }
        required
    }

    /// Asks the topology for every master's replicas; an error keeps what
    /// was known (the next registration asks again).
    async fn learn_topology(&self) {
        if self.is_cluster() && !self.in_sync.knows_promotion_window() {
            let window = self.promotion_window().await;
            self.in_sync.set_promotion_window(window);
        }
        match self.replication().await {
            Ok(replication) => self.in_sync.learn(&replication),
            Err(e) => tracing::debug!(
                cause = e.message(),
                "the alias store's replication could not be read; the replicas known before are waited for"
            ),
        }
    }

    /// How long after it is cut off a cluster's replica may still be
    /// promoted: Redis lets a replica stand for election while its data
    /// is at most `cluster-node-timeout` × `cluster-replica-validity-factor`
    /// \+ `repl-ping-replica-period` old (`None` with a factor of 0: always).
    /// The three are asked of one node (`CONFIG GET`); where that is
    /// refused (a managed service may rename `CONFIG`), Redis's defaults
    /// stand: 15 s × 10 + 10 s.
    async fn promotion_window(&self) -> Option<Duration> {
        let mut cmd = ::redis::cmd("CONFIG");
        cmd.arg("GET")
            .arg("cluster-node-timeout")
            .arg("cluster-replica-validity-factor")
            .arg("repl-ping-replica-period");
        let config: std::collections::HashMap<String, String> = match self.query(&cmd).await {
            Ok(value) => ::redis::from_redis_value(value).unwrap_or_default(),
            Err(e) => {
                tracing::debug!(
                    cause = %e,
                    "CONFIG GET was refused; Redis's defaults stand for how long a cut-off replica may still be promoted (160 s)"
                );
                Default::default()
            }
        };
        let number = |name: &str, default: u64| {
            config
                .get(name)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(default)
        };
        let factor = number("cluster-replica-validity-factor", 10);
        (factor > 0).then(|| {
            Duration::from_millis(number("cluster-node-timeout", 15_000).saturating_mul(factor))
                + Duration::from_secs(number("repl-ping-replica-period", 10))
        })
    }

    /// How many registrations were given out while their master had no
    /// replica in sync to wait for
    /// ([`RedisStoreOptions::wait_for_in_sync_replicas`]): what a crash of
    /// that master would lose; 0 without the option.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(store: proto_ai_tools::store::RedisStore) {
    /// if store.registrations_without_replica() > 0 {
    ///     eprintln!("some aliases are held by one Redis node alone");
    /// }
    /// # }
    /// ```
    pub fn registrations_without_replica(&self) -> u64 {
        self.without_replica.load(Ordering::Relaxed)
    }

    /// How long a `WAIT` may block on the server: the `wait_timeout`, else
    /// half the response timeout (at least 1 ms; 0 would mean for ever).
    fn wait_ms(&self) -> u64 {
        let wait = self
            .options
            .wait_timeout
            .unwrap_or(self.options.response_timeout / 2);
        u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1)
    }

    /// One run of `script` (by its SHA1, or by its text), with a `WAIT` for
    /// `replicas` when there are any: the script's reply, and the replicas
    /// that acknowledged.
    async fn run(
        &self,
        script: &Lua,
        by_sha: bool,
        keys: &[String; 4],
        args: &[&[u8]],
        replicas: usize,
    ) -> Result<(Value, Option<usize>), RedisError> {
        let mut cmd = if by_sha {
            let mut cmd = ::redis::cmd("EVALSHA");
            cmd.arg(script.script.get_hash());
            cmd
        } else {
            let mut cmd = ::redis::cmd("EVAL");
            cmd.arg(script.code);
            cmd
        };
        cmd.arg(keys.len()).arg(&keys[..]);
        for arg in args {
            cmd.arg(*arg);
        }
        if replicas == 0 {
            return Ok((self.query(&cmd).await?, None));
        }
        let mut pipe = ::redis::pipe();
        pipe.ignore_errors()
            .add_command(cmd)
            .cmd("WAIT")
            .arg(replicas)
            .arg(self.wait_ms());
        let mut answers = self.query_pipeline(&pipe).await?.into_iter();
        let (Some(reply), Some(acks), None) = (answers.next(), answers.next(), answers.next())
        else {
            return Err(RedisError::from((
                ErrorKind::UnexpectedReturnType,
                "the script and WAIT did not get two answers",
            )));
        };
        let reply = reply.extract_error()?;
        let acks: usize = ::redis::from_redis_value(acks.extract_error()?)?;
        Ok((reply, Some(acks)))
    }

    /// `duration` in whole milliseconds, at least 1 (a `PEXPIRE` of 0
    /// deletes the key).
    fn duration_ms(duration: Duration) -> u64 {
        u64::try_from(duration.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// Sets `fields` of the hash at `key` and gives the key `ttl` again, in
    /// one round trip: the record of an MCP session that roams between
    /// gateways (`mcp::session_store`), on the alias store's connection.
    /// A pipeline, not a transaction: both commands name the one key, so a
    /// cluster sends them to one node, in order.
    #[doc(hidden)]
    pub async fn hash_set_with_ttl(
        &self,
        key: &str,
        fields: &[(&str, &str)],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let mut pipe = ::redis::pipe();
        pipe.cmd("HSET").arg(key);
        for (field, value) in fields {
            pipe.arg(*field).arg(*value);
        }
        pipe.cmd("PEXPIRE").arg(key).arg(Self::duration_ms(ttl));
        self.query_pipeline(&pipe)
            .await
            .map(|_| ())
            .map_err(unavailable)
    }

    /// Every field of the hash at `key`, as bytes (the caller decides what
    /// text it takes); none when there is no such key.
    #[doc(hidden)]
    pub async fn hash_get_all(&self, key: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(key);
        let value = self.query(&cmd).await.map_err(unavailable)?;
        ::redis::from_redis_value(value).map_err(unavailable)
    }

    /// Gives `key` `ttl` again; whether the key exists.
    #[doc(hidden)]
    pub async fn expire_key(&self, key: &str, ttl: Duration) -> Result<bool, StoreError> {
        let mut cmd = ::redis::cmd("PEXPIRE");
        cmd.arg(key).arg(Self::duration_ms(ttl));
        let value = self.query(&cmd).await.map_err(unavailable)?;
        let set: i64 = ::redis::from_redis_value(value).map_err(unavailable)?;
        Ok(set == 1)
    }

    /// Deletes `key`.
    #[doc(hidden)]
    pub async fn delete_key(&self, key: &str) -> Result<(), StoreError> {
        let mut cmd = ::redis::cmd("DEL");
        cmd.arg(key);
        self.query(&cmd).await.map(|_| ()).map_err(unavailable)
    }

    /// This store with [`wait_for_replicas`](RedisStoreOptions::wait_for_replicas)
    /// set to `replicas`: for a caller that decides how many replicas to
    /// wait for once it has seen how many there are ([`replication`](Self::replication)).
    /// Clones of the store made before keep their own setting.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), proto_ai_tools::store::StoreError> {
    /// let store = proto_ai_tools::store::RedisStore::connect("redis://127.0.0.1:6379").await?;
    /// let fewest = store.replication().await?.fewest_replicas();
    /// let store = store.with_wait_for_replicas(fewest.min(1));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_wait_for_replicas(mut self, replicas: usize) -> Self {
        Arc::make_mut(&mut self.options).wait_for_replicas = replicas;
        self
    }

    /// This store with
    /// [`wait_for_in_sync_replicas`](RedisStoreOptions::wait_for_in_sync_replicas)
    /// on: each registration waits for the replicas in sync with its
    /// master at that moment. What `ai-tools mcp --redis-wait-replicas auto`
    /// (the default) uses. Clones of the store made before keep their own
    /// setting.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), proto_ai_tools::store::StoreError> {
    /// let store = proto_ai_tools::store::RedisStore::connect("redis://127.0.0.1:6379")
    ///     .await?
    ///     .with_wait_for_in_sync_replicas();
    /// assert!(store.options().wait_for_in_sync_replicas);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_wait_for_in_sync_replicas(mut self) -> Self {
        Arc::make_mut(&mut self.options).wait_for_in_sync_replicas = true;
        self
    }

    /// How many replicas each master of the store has, as the servers say
    /// now: on one server, its `INFO replication` (the replicas in sync,
    /// `state=online`: one still loading the master's data acknowledges no
    /// `WAIT`); on a cluster, `CLUSTER NODES` asked of one node, counting for each
    /// master that serves slots the replicas not marked failed. What
    /// [`wait_for_replicas`](RedisStoreOptions::wait_for_replicas) can ask
    /// for: waiting for more replicas than a master has fails every
    /// registration on it.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the server cannot be asked, answers something
    /// that does not read as replication, or (one server) is itself a
    /// replica, where no registration can be written.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), proto_ai_tools::store::StoreError> {
    /// let store = proto_ai_tools::store::RedisStore::connect("redis://127.0.0.1:6379").await?;
    /// let replication = store.replication().await?;
    /// for master in replication.without_replicas() {
    ///     eprintln!("{} has no replica: a crash of it loses what it held", master.address.as_deref().unwrap_or("the server"));
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn replication(&self) -> Result<Replication, StoreError> {
        if self.is_cluster() {
            let mut cmd = ::redis::cmd("CLUSTER");
            cmd.arg("NODES");
            let value = self.query(&cmd).await.map_err(unavailable)?;
            let text: String = ::redis::from_redis_value(value).map_err(unavailable)?;
            Replication::of_cluster_nodes(&text)
        } else {
            let mut cmd = ::redis::cmd("INFO");
            cmd.arg("replication");
            let value = self.query(&cmd).await.map_err(unavailable)?;
            let text: String = ::redis::from_redis_value(value).map_err(unavailable)?;
            Replication::of_info(&text)
        }
    }
}

/// A Lua script and its SHA1.
struct Lua {
    script: Script,
    code: &'static str,
}

impl Lua {
    fn new(code: &'static str) -> Self {
        Self {
            script: Script::new(code),
            code,
        }
    }
}

fn unavailable(e: impl fmt::Display) -> StoreError {
    StoreError::unavailable(e)
}

impl AliasStore for RedisStore {
    fn assign<'a>(
        &'a self,
        conversation: &'a str,
        ids: &'a [(String, String)],
        limit: usize,
        floor: &'a Floor,
    ) -> BoxFuture<'a, Result<Assignment, AssignError>> {
        Box::pin(async move {
            let ttl = self.ttl_ms().to_string();
            let limit = limit.to_string();
            let epoch = new_epoch();
            let (idle, now) = self.idle_and_now_ms();
            let (idle, now) = (idle.to_string(), now.to_string());
            let floor = FloorArgs::new(floor);
            let mut args: Vec<&[u8]> = vec![
                ttl.as_bytes(),
                limit.as_bytes(),
                epoch.as_bytes(),
                now.as_bytes(),
                idle.as_bytes(),
            ];
            floor.push(&mut args);
            for (prefix, uuid) in ids {
                args.push(prefix.as_bytes());
                args.push(uuid.as_bytes());
            }
            let reply = self.eval(&self.assign, conversation, &args, true).await?;
            match reply.split_first() {
                Some((Some(flag), _)) if flag == "#limit" => Err(AssignError::LimitReached {
                    limit: limit.parse().unwrap_or_default(),
                }),
                Some((Some(epoch), aliases)) if aliases.len() == ids.len() => {
                    let aliases: Option<Vec<String>> = aliases.iter().cloned().collect();
                    aliases
                        .map(|aliases| Assignment {
                            epoch: epoch.clone(),
                            aliases,
                        })
                        .ok_or_else(|| malformed("an alias is missing").into())
                }
                _ => Err(malformed("the assignment has the wrong shape").into()),
            }
        })
    }

    fn lookup<'a>(
        &'a self,
        conversation: &'a str,
        aliases: &'a [String],
        uuids: &'a [String],
        floor: &'a Floor,
    ) -> BoxFuture<'a, Result<Lookup, StoreError>> {
        Box::pin(async move {
            let ttl = self.ttl_ms().to_string();
            let count = aliases.len().to_string();
            let (idle, now) = self.idle_and_now_ms();
            let (idle, now) = (idle.to_string(), now.to_string());
            let floor = FloorArgs::new(floor);
            let mut args: Vec<&[u8]> = vec![
                ttl.as_bytes(),
                count.as_bytes(),
                now.as_bytes(),
                idle.as_bytes(),
            ];
            floor.push(&mut args);
            args.extend(aliases.iter().map(|a| a.as_bytes()));
            args.extend(uuids.iter().map(|u| u.as_bytes()));
            let reply = self.eval(&self.lookup, conversation, &args, false).await?;
            let Some((epoch, rest)) = reply.split_first() else {
                return Err(malformed("the lookup is empty"));
            };
            if rest.len() != 2 * aliases.len() + uuids.len() {
                return Err(malformed("the lookup has the wrong length"));
            }
            let (found_aliases, rest) = rest.split_at(aliases.len());
            let (found_uuids, flags) = rest.split_at(uuids.len());
            Ok(Lookup {
                epoch: epoch.clone(),
                expired: flags
                    .iter()
                    .map(|flag| flag.as_deref() == Some("1"))
                    .collect(),
                lost: flags
                    .iter()
                    .map(|flag| flag.as_deref() == Some("2"))
                    .collect(),
                aliases: found_aliases.to_vec(),
                uuids: found_uuids
                    .iter()
                    .map(|list| {
                        list.as_deref()
                            .unwrap_or_default()
                            .split_whitespace()
                            .map(str::to_owned)
                            .collect()
                    })
                    .collect(),
            })
        })
    }

    fn list<'a>(
        &'a self,
        conversation: &'a str,
        prefix: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let [aliases_key, ..] = self.keys_checked(conversation)?;
            let mut cmd = ::redis::cmd("HKEYS");
            cmd.arg(aliases_key);
            let value = self.query(&cmd).await.map_err(unavailable)?;
            let all: Vec<String> = ::redis::from_redis_value(value).map_err(unavailable)?;
            let mut mine: Vec<String> = all
                .into_iter()
                .filter(|a| prefix_of(a) == Some(prefix))
                .collect();
            mine.sort_by_key(|a| number_of(a));
            Ok(mine)
        })
    }

    fn remove<'a>(&'a self, conversation: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut cmd = ::redis::cmd("DEL");
            cmd.arg(&self.keys_checked(conversation)?[..]);
            self.query(&cmd).await.map(|_| ()).map_err(unavailable)
        })
    }

    fn ttl(&self) -> Duration {
        self.options.ttl
    }
}

/// A [`Floor`] as the scripts' arguments: the caller's epoch (empty for
/// none), the number of pairs, then `prefix, number` pairs.
struct FloorArgs<'f> {
    epoch: &'f str,
    count: String,
    counters: Vec<(&'f str, String)>,
}

impl<'f> FloorArgs<'f> {
    fn new(floor: &'f Floor) -> Self {
        let counters: Vec<(&str, String)> = match floor.epoch {
            Some(_) => floor
                .counters
                .iter()
                .map(|(prefix, n)| (prefix.as_str(), n.to_string()))
                .collect(),
            None => Vec::new(),
        };
        Self {
            epoch: floor.epoch.as_deref().unwrap_or_default(),
            count: counters.len().to_string(),
            counters,
        }
    }

    fn push<'a>(&'a self, args: &mut Vec<&'a [u8]>) {
        args.push(self.epoch.as_bytes());
        args.push(self.count.as_bytes());
        for (prefix, n) in &self.counters {
            args.push(prefix.as_bytes());
            args.push(n.as_bytes());
        }
    }
}
