use super::*;
use prost_reflect::Value as ProtoValue;
use serde_json::json;

fn uuid(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

/// `google.protobuf.StringValue`, whose `value` carries the `link` prefix.
fn string_value_with_a_link() -> (prost_reflect::MessageDescriptor, [FieldPrefix; 1]) {
    let desc = prost_reflect::DescriptorPool::global()
        .get_message_by_name("google.protobuf.StringValue")
        .unwrap();
    let prefixes = [FieldPrefix {
        message: "google.protobuf.StringValue",
        field: "value",
        prefix: "link",
    }];
    (desc, prefixes)
}

#[tokio::test]
async fn counters_are_per_prefix_and_stable() {
    let m = AliasManager::new();
    assert_eq!(m.register("link", &uuid(1)).await.unwrap(), "link-1");
    assert_eq!(m.register("theme", &uuid(2)).await.unwrap(), "theme-1");
    assert_eq!(m.register("link", &uuid(3)).await.unwrap(), "link-2");
    assert_eq!(
        m.register("link", &uuid(1).to_uppercase()).await.unwrap(),
        "link-1"
    );
    assert_eq!(m.aliases_of("link"), ["link-1", "link-2"]);
    assert_eq!(m.len(), 3);
}

#[tokio::test]
async fn rejects_bad_input() {
    let m = AliasManager::new();
    assert!(matches!(
        m.register("Link", &uuid(1)).await,
        Err(AliasError::InvalidPrefix(_))
    ));
    assert!(matches!(
        m.register("", &uuid(1)).await,
        Err(AliasError::InvalidPrefix(_))
    ));
    assert!(matches!(
        m.register("link", "d290f1ee").await,
        Err(AliasError::NotAUuid(_))
    ));
    assert!(matches!(
        m.register("link", &format!(" {}", uuid(1))).await,
        Err(AliasError::NotAUuid(_))
    ));
    assert!(m.is_empty());
}

#[tokio::test]
async fn case_insensitive_everywhere() {
    let m = AliasManager::new();
    let upper = uuid(0xabcdef).to_uppercase();
    assert_eq!(m.register("link", &upper).await.unwrap(), "link-1");
    assert_eq!(m.resolve("LINK-1"), Some(uuid(0xabcdef)));
    let mut v = json!([upper]);
    m.aliasify_json(&mut v);
    assert_eq!(v, json!(["link-1"]));
    assert_eq!(
        m.resolve_for_field("link", &upper),
        Resolution::Uuid(uuid(0xabcdef))
    );
}

#[tokio::test]
async fn structural_replacement_never_touches_substrings() {
    let m = AliasManager::new();
    for n in 1..=12 {
        m.register("link", &uuid(n)).await.unwrap();
    }
    let mut v = json!({
        "a": "link-1", "b": "link-10", "c": "see link-1", "d": ["link-12", {"e": "link-1"}],
        "link-1": "key stays",
    });
    m.resolve_json(&mut v);
    assert_eq!(
        v,
        json!({
            "a": uuid(1), "b": uuid(10), "c": "see link-1", "d": [uuid(12), {"e": uuid(1)}],
            "link-1": "key stays",
        })
    );
    m.aliasify_json(&mut v);
    assert_eq!(
        v,
        json!({
            "a": "link-1", "b": "link-10", "c": "see link-1", "d": ["link-12", {"e": "link-1"}],
            "link-1": "key stays",
        })
    );
}

#[tokio::test]
async fn text_tokens_are_whole() {
    let m = AliasManager::new();
    m.register("link", &uuid(1)).await.unwrap();
    let glued = format!("x{}", uuid(1));
    let longer = format!("{}0", uuid(1));
    let text = format!(
        "a {} b {glued} c {longer} d ({})",
        uuid(1),
        uuid(1).to_uppercase()
    );
    assert_eq!(
        m.aliasify_text(&text),
        format!("a link-1 b {glued} c {longer} d (link-1)")
    );
    assert_eq!(m.aliasify_text("no ids, ünïcode ✓"), "no ids, ünïcode ✓");
}

#[tokio::test]
async fn register_new_uuids_in_document_order() {
    let m = AliasManager::new();
    m.register("theme", &uuid(5)).await.unwrap();
    let text = format!("{} {} {} {}", uuid(3), uuid(5), uuid(1), uuid(3));
    assert_eq!(
        m.register_new_uuids("link", &text).await.unwrap(),
        ["link-1", "link-2"]
    );
    assert_eq!(m.resolve("link-1"), Some(uuid(3)));
    assert_eq!(m.resolve("link-2"), Some(uuid(1)));
}

#[tokio::test]
async fn field_resolution_checks_prefix() {
    let m = AliasManager::new();
    m.register("link", &uuid(1)).await.unwrap();
    m.register("step", &uuid(2)).await.unwrap();
    assert_eq!(
        m.resolve_for_field("link", " link-1 "),
        Resolution::Uuid(uuid(1))
    );
    assert_eq!(
        m.resolve_for_field("link", "step-1"),
        Resolution::WrongPrefix {
            actual: "step".into()
        }
    );
    assert_eq!(
        m.resolve_for_field("link", &uuid(2)),
        Resolution::WrongPrefix {
            actual: "step".into()
        }
    );
    assert_eq!(
        m.resolve_for_field("step", "step-0"),
        Resolution::UnknownAlias
    );
    assert_eq!(
        m.resolve_for_field("link", &uuid(9)),
        Resolution::UnknownUuid(uuid(9))
    );
    assert_eq!(m.resolve_for_field("link", ""), Resolution::Empty);
}

#[tokio::test]
async fn snapshot_restores_counters() {
    let m = AliasManager::new();
    for n in 1..=3 {
        m.register("link", &uuid(n)).await.unwrap();
    }
    m.register("theme", &uuid(7)).await.unwrap();
    let json = serde_json::to_string(&m.snapshot()).unwrap();
    let r = AliasManager::from_snapshot(serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(r.resolve("link-3"), Some(uuid(3)));
    assert_eq!(r.register("link", &uuid(2)).await.unwrap(), "link-2");
    assert_eq!(r.register("link", &uuid(4)).await.unwrap(), "link-4");
    assert_eq!(r.register("theme", &uuid(8)).await.unwrap(), "theme-2");
    assert_eq!(r.snapshot().counters["link"], 4);
}

#[tokio::test]
async fn snapshot_counter_gaps_are_kept_and_bad_snapshots_refused() {
    let snap = AliasSnapshot {
        entries: vec![AliasEntry {
            prefix: "link".into(),
            alias: "link-5".into(),
            uuid: uuid(1).to_uppercase(),
        }],
        counters: BTreeMap::from([("link".into(), 2)]),
    };
    let r = AliasManager::from_snapshot(snap.clone()).unwrap();
    assert_eq!(r.register("link", &uuid(2)).await.unwrap(), "link-6");

    let mut bad = snap.clone();
    bad.entries[0].alias = "theme-1".into();
    assert!(AliasManager::from_snapshot(bad).is_err());
    let mut bad = snap.clone();
    bad.entries.push(bad.entries[0].clone());
    assert!(AliasManager::from_snapshot(bad).is_err());
    let mut bad = snap;
    bad.entries[0].uuid = "nope".into();
    assert!(AliasManager::from_snapshot(bad).is_err());
}

#[tokio::test]
async fn one_uuid_under_several_prefixes_and_far_apart_numbers() {
    let m = AliasManager::new();
    let uuid = "d290f1ee-6c54-4b01-90e6-d701748f0851";
    assert_eq!(m.register("link", uuid).await.unwrap(), "link-1");
    assert_eq!(m.register("page", uuid).await.unwrap(), "page-1");
    assert_eq!(m.register("link", uuid).await.unwrap(), "link-1");
    assert_eq!(m.alias_for(uuid).as_deref(), Some("link-1"));
    assert!(matches!(
        m.resolve_for_field("page", uuid),
        Resolution::Uuid(_)
    ));
    // An edited snapshot may carry any number; it is kept exactly.
    let mut snapshot = m.snapshot();
    snapshot.entries.push(AliasEntry {
        prefix: "link".into(),
        alias: "link-9000000000".into(),
        uuid: "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7".into(),
    });
    let restored = AliasManager::from_snapshot(snapshot).unwrap();
    assert_eq!(
        restored.resolve("LINK-9000000000").as_deref(),
        Some("5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7")
    );
    assert_eq!(
        restored
            .register("link", "6f1c2d3e-4b5a-4c6d-8e7f-000000000001")
            .await
            .unwrap(),
        "link-9000000001"
    );
    assert_eq!(restored.aliases_of("link").len(), 3);
    assert_eq!(restored.snapshot().entries, {
        let mut all = m.snapshot().entries;
        all.push(restored.snapshot().entries[2].clone());
        all.push(restored.snapshot().entries[3].clone());
        all
    });
}

#[tokio::test]
async fn an_expiring_namespace_forgets_idle_aliases_and_never_reuses_a_number() {
    tokio::time::pause();
    let step = |secs| tokio::time::advance(std::time::Duration::from_secs(secs));
    let counts = std::sync::Arc::new(super::AliasCounts::default());
    let m = AliasManager::new()
        .with_expiry(std::time::Duration::from_secs(60))
        .with_counts(counts.clone());
    assert_eq!(m.register("link", &uuid(1)).await.unwrap(), "link-1");
    assert_eq!(m.register("link", &uuid(2)).await.unwrap(), "link-2");
    step(30).await;
    assert!(m.resolve("link-1").is_some(), "resolving is a use");
    step(40).await;
    // link-2 went 70 s unused, link-1 40 s
    assert_eq!(m.resolve_for_field("link", "link-2"), Resolution::Expired);
    assert!(matches!(
        m.resolve_for_field("link", "LINK-1"),
        Resolution::Uuid(_)
    ));
    assert_eq!(
        m.resolve_for_field("link", "link-3"),
        Resolution::UnknownAlias
    );
    assert_eq!(
        m.resolve_for_field("step", "step-1"),
        Resolution::UnknownAlias
    );
    assert_eq!(m.len(), 1);
    // the expired UUID comes back under a new number
    assert_eq!(m.register("link", &uuid(2)).await.unwrap(), "link-3");
    assert_eq!(m.resolve_for_field("link", "link-2"), Resolution::Expired);
    // showing an alias again is a use
    step(50).await;
    let mut shown = json!({"id": uuid(1)});
    assert_eq!(m.register("link", &uuid(1)).await.unwrap(), "link-1");
    m.aliasify_json(&mut shown);
    step(50).await;
    assert!(m.resolve("link-1").is_some(), "used 50 s ago");
    assert_eq!(m.resolve_for_field("link", "link-3"), Resolution::Expired);
    // Counted as it went: three numbers given (link-1 shown again is not
    // new), LINK-1 resolved in a field, three expired ones sent.
    assert_eq!(
        (
            counts.given(),
            counts.resolved(),
            counts.expired(),
            counts.lost()
        ),
        (3, 1, 3, 0)
    );
}

#[tokio::test]
async fn a_batch_the_limit_cannot_hold_is_refused_not_made_of_expired_aliases() {
    let m = AliasManager::new()
        .with_limit(3)
        .with_expiry(std::time::Duration::from_secs(3600));
    for n in 1..=3 {
        m.register("link", &uuid(n)).await.unwrap();
    }
    // three known and one new in one batch: four distinct ids, one more
    // than the limit, and evicting one of the batch would answer with
    // an alias already expired
    let (u1, u2, u3, u4) = (uuid(1), uuid(2), uuid(3), uuid(4));
    let batch = [
        ("link", u1.as_str()),
        ("link", &u2),
        ("link", &u3),
        ("link", &u4),
    ];
    assert_eq!(
        m.register_all(&batch).await,
        Err(AliasError::LimitReached { limit: 3 })
    );
    for alias in ["link-1", "link-2", "link-3"] {
        assert!(m.resolve(alias).is_some(), "{alias}");
    }
    // only canonical spellings name a number
    assert_eq!(
        m.resolve_for_field("link", "link-04"),
        Resolution::UnknownAlias
    );
    let store = Arc::new(
        crate::store::MemoryStore::new(std::time::Duration::from_secs(60))
            .with_alias_idle(std::time::Duration::from_secs(3600)),
    );
    let ids: Vec<(String, String)> = (1..=3).map(|n| ("link".to_owned(), uuid(n))).collect();
    store.assign("c", &ids, 3, &Floor::default()).await.unwrap();
    let mut four = ids.clone();
    four.push(("link".to_owned(), uuid(4)));
    assert_eq!(
        store.assign("c", &four, 3, &Floor::default()).await,
        Err(AssignError::LimitReached { limit: 3 })
    );
    let held = store
        .lookup(
            "c",
            &["link-1".to_owned(), "link-4".to_owned()],
            &[],
            &Floor::default(),
        )
        .await
        .unwrap();
    assert_eq!(held.aliases[0], Some(uuid(1)));
    assert_eq!((held.aliases[1].clone(), held.expired[1]), (None, false));
}

#[tokio::test]
async fn a_shared_copy_follows_the_store_when_it_gives_a_uuid_a_new_alias() {
    let store = Arc::new(
        crate::store::MemoryStore::new(std::time::Duration::from_secs(60))
            .with_alias_idle(std::time::Duration::from_secs(3600)),
    );
    let m = AliasManager::with_store(store, "c").with_limit(2);
    for n in 1..=3 {
        m.register("link", &uuid(n)).await.unwrap();
    }
    // the store evicted link-1 for link-3; the copy may still hold it,
    // but the store's new alias for the same UUID wins
    assert_eq!(m.register("link", &uuid(1)).await.unwrap(), "link-4");
    assert_eq!(m.alias_for(&uuid(1)).as_deref(), Some("link-4"));
    assert_eq!(
        m.resolve_for_field("link", "link-4"),
        Resolution::Uuid(uuid(1))
    );
    m.fetch(["link-1", "link-01"]).await.unwrap();
    assert_eq!(m.resolve_for_field("link", "link-1"), Resolution::Expired);
    assert!(
        m.resolve("link-4").is_some(),
        "a spelling with a zero forgets nothing"
    );
}

#[tokio::test]
async fn at_its_limit_an_expiring_namespace_evicts_the_least_recently_used() {
    tokio::time::pause();
    let step = || tokio::time::advance(std::time::Duration::from_secs(1));
    let m = AliasManager::new()
        .with_limit(3)
        .with_expiry(std::time::Duration::from_secs(3600));
    for n in 1..=3 {
        m.register("link", &uuid(n)).await.unwrap();
        step().await;
    }
    assert!(m.resolve("link-1").is_some());
    step().await;
    // link-2 is the least recently used: it makes room for link-4
    assert_eq!(m.register("link", &uuid(4)).await.unwrap(), "link-4");
    assert_eq!(m.len(), 3);
    assert_eq!(m.resolve_for_field("link", "link-2"), Resolution::Expired);
    for alias in ["link-1", "link-3", "link-4"] {
        assert!(m.resolve(alias).is_some(), "{alias}");
    }
    // a batch of more new UUIDs than the limit is still refused whole
    let text = format!("{} {} {} {}", uuid(5), uuid(6), uuid(7), uuid(8));
    assert_eq!(
        m.register_new_uuids("link", &text).await,
        Err(AliasError::LimitReached { limit: 3 })
    );
    assert_eq!(m.len(), 3);
    assert!(m.resolve("link-4").is_some(), "nothing was evicted for it");
    // a long life of churn: the namespace keeps working, holds the
    // limit, and its numbers only grow
    for n in 10..1010 {
        m.register("link", &uuid(n)).await.unwrap();
        step().await;
    }
    assert_eq!(m.len(), 3);
    assert_eq!(m.snapshot().entries.len(), 3);
    assert_eq!(
        m.aliases_of("link"),
        ["link-1002", "link-1003", "link-1004"]
    );
    assert_eq!(m.resolve("link-1004"), Some(uuid(1009)));
    assert_eq!(m.alias_for(&uuid(1007)).as_deref(), Some("link-1002"));
    assert_eq!(m.resolve_for_field("link", "link-4"), Resolution::Expired);
}

#[tokio::test]
async fn the_alias_limit_is_all_or_nothing() {
    let m = AliasManager::new().with_limit(3);
    m.register("link", &uuid(1)).await.unwrap();
    m.register("link", &uuid(2)).await.unwrap();
    // two new UUIDs do not fit under a limit of 3: none is registered
    let text = format!("{} {} {}", uuid(1), uuid(3), uuid(4));
    assert_eq!(
        m.register_new_uuids("link", &text).await,
        Err(AliasError::LimitReached { limit: 3 })
    );
    assert_eq!(m.len(), 2);
    // the same UUID twice counts once
    let text = format!("{} {}", uuid(3), uuid(3).to_uppercase());
    assert_eq!(
        m.register_new_uuids("link", &text).await.unwrap(),
        ["link-3"]
    );
    assert_eq!(
        m.register("step", &uuid(9)).await,
        Err(AliasError::LimitReached { limit: 3 })
    );
    // known UUIDs still register to their alias, resolve and aliasify
    assert_eq!(m.register("link", &uuid(1)).await.unwrap(), "link-1");
    let mut v = json!([uuid(2)]);
    m.aliasify_json(&mut v);
    assert_eq!(v, json!(["link-2"]));
    assert_eq!(m.snapshot().counters["link"], 3);
    assert!(!m.snapshot().counters.contains_key("step"));
    let restored = AliasManager::from_snapshot(m.snapshot())
        .unwrap()
        .with_limit(2);
    assert_eq!(restored.len(), 3, "a snapshot over the limit is kept whole");
    assert!(restored.register("link", &uuid(5)).await.is_err());
    // known UUIDs keep their aliases there too, alone or in a batch
    assert_eq!(restored.register("link", &uuid(1)).await.unwrap(), "link-1");
    let known = format!("{} {}", uuid(1), uuid(2));
    assert_eq!(
        restored.register_new_uuids("link", &known).await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(restored.len(), 3);
}

#[tokio::test]
async fn register_message_at_the_limit_leaves_the_message_unchanged() {
    let (desc, prefixes) = string_value_with_a_link();
    let m = AliasManager::new().with_limit(1);
    m.register("link", &uuid(1)).await.unwrap();
    let mut message = DynamicMessage::new(desc.clone());
    message.set_field_by_name("value", ProtoValue::String(uuid(2)));
    assert_eq!(
        m.register_message(&mut message, &prefixes).await,
        Err(AliasError::LimitReached { limit: 1 })
    );
    assert_eq!(
        message.get_field_by_name("value").unwrap().as_str(),
        Some(uuid(2).as_str())
    );
    assert_eq!(m.len(), 1);
    // a message of known ids still goes through
    let mut known = DynamicMessage::new(desc);
    known.set_field_by_name("value", ProtoValue::String(uuid(1).to_uppercase()));
    m.register_message(&mut known, &prefixes).await.unwrap();
    assert_eq!(
        known.get_field_by_name("value").unwrap().as_str(),
        Some("link-1")
    );
}

fn shared_pair(ttl: std::time::Duration) -> (AliasManager, AliasManager) {
    let store: Arc<dyn AliasStore> = Arc::new(crate::store::MemoryStore::new(ttl));
    (
        AliasManager::with_store(store.clone(), "c"),
        AliasManager::with_store(store, "c"),
    )
}

#[tokio::test]
async fn shared_managers_agree_through_their_store() {
    let (a, b) = shared_pair(std::time::Duration::from_secs(60));
    assert_eq!(a.register("link", &uuid(1)).await.unwrap(), "link-1");
    assert_eq!(
        a.register_all(&[("link", &uuid(1)), ("link", &uuid(2)), ("link", &uuid(1))])
            .await
            .unwrap(),
        ["link-1", "link-2", "link-1"]
    );
    // b learns nothing until it asks
    assert_eq!(b.resolve("link-2"), None);
    assert_eq!(
        b.register_all(&[("link", &uuid(3)), ("link", &uuid(2))])
            .await
            .unwrap(),
        ["link-3", "link-2"]
    );
    b.fetch(&["LINK-1 ", "not an alias", &uuid(2).to_uppercase()])
        .await
        .unwrap();
    assert_eq!(
        b.resolve_for_field("link", "link-1"),
        Resolution::Uuid(uuid(1))
    );
    assert_eq!(a.resolve("link-3"), None);
    assert_eq!(
        a.list("link").await.unwrap(),
        ["link-1", "link-2", "link-3"]
    );
    a.fetch(&[uuid(3)]).await.unwrap();
    let mut v = json!({"ids": [uuid(3), uuid(9)]});
    a.aliasify_json(&mut v);
    assert_eq!(v, json!({"ids": ["link-3", uuid(9)]}));
}

#[tokio::test(start_paused = true)]
async fn a_new_epoch_drops_the_local_copy() {
    let (a, b) = shared_pair(std::time::Duration::from_millis(20));
    a.register_all(&[("link", &uuid(1))]).await.unwrap();
    assert_eq!(a.resolve("link-1"), Some(uuid(1)));
    tokio::time::advance(std::time::Duration::from_millis(40)).await;
    // expired in the store: b starts the conversation again
    assert_eq!(
        b.register_all(&[("link", &uuid(2))]).await.unwrap(),
        ["link-1"]
    );
    a.fetch(&["link-1"]).await.unwrap();
    assert_eq!(a.resolve("link-1"), Some(uuid(2)));
    assert_eq!(a.len(), 1);
}

#[tokio::test]
async fn shared_register_new_uuids_skips_what_the_store_knows() {
    let (a, b) = shared_pair(std::time::Duration::from_secs(60));
    a.register("theme", &uuid(1)).await.unwrap();
    let text = format!("{} and {} and {}", uuid(1), uuid(2), uuid(2).to_uppercase());
    // b has never seen uuid(1), but the store has: only uuid(2) is new
    assert_eq!(
        b.register_new_uuids("link", &text).await.unwrap(),
        ["link-1"]
    );
    assert!(
        b.register_new_uuids("link", &text)
            .await
            .unwrap()
            .is_empty()
    );
    a.fetch(&["link-1"]).await.unwrap();
    assert_eq!(a.resolve("link-1"), Some(uuid(2)));
    assert_eq!(b.aliasify_text(&uuid(1)), "theme-1");
}

#[tokio::test]
async fn shared_register_message_is_all_or_nothing_at_the_limit() {
    let (desc, prefixes) = string_value_with_a_link();
    let (a, _) = shared_pair(std::time::Duration::from_secs(60));
    let a = a.with_limit(1);
    a.register_all(&[("link", &uuid(1))]).await.unwrap();
    let mut message = DynamicMessage::new(desc);
    message.set_field_by_name("value", ProtoValue::String(uuid(2)));
    assert_eq!(
        a.register_message(&mut message, &prefixes).await,
        Err(AliasError::LimitReached { limit: 1 })
    );
    assert_eq!(
        message.get_field_by_name("value").unwrap().as_str(),
        Some(uuid(2).as_str())
    );
    message.set_field_by_name("value", ProtoValue::String(uuid(1).to_uppercase()));
    a.register_message(&mut message, &prefixes).await.unwrap();
    assert_eq!(
        message.get_field_by_name("value").unwrap().as_str(),
        Some("link-1")
    );
}

#[test]
fn fetch_keys_take_aliases_and_uuids_only() {
    let (aliases, uuids) = fetch_keys([
        " Link-1",
        "link-1",
        "free text",
        "x-",
        "-1",
        "Step_2-10",
        &uuid(1),
        &uuid(1).to_uppercase(),
    ]);
    assert_eq!(aliases, ["link-1", "step_2-10"]);
    assert_eq!(uuids, [uuid(1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thread_safe() {
    let m = std::sync::Arc::new(AliasManager::new());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let m = m.clone();
            tokio::spawn(async move {
                for n in 0..100 {
                    m.register("link", &uuid(t * 1000 + n)).await.unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(m.aliases_of("link").len(), 800);
    assert_eq!(m.resolve("link-800").map(|u| u.len()), Some(36));
}
