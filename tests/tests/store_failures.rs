//! A native tool whose function meets an alias store that stopped
//! answering (`?` on `AliasManager::register`, or on the store's own
//! error) tells the model the store is unavailable and what to do, never
//! the store's address or the system's error: a real `redis-server`,
//! killed between two calls. Without `redis-server` the test says why it
//! skips, unless `AI_TOOLS_REQUIRE_REDIS` is set.

use std::sync::Arc;

use proto_ai_tools::store::{AliasStore, RedisStore};
use proto_ai_tools::{AliasManager, NativeTool, ToolContext, ToolError};
use proto_ai_tools_tests::redis_suite::{RedisServer, skip};

fn uuid(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

#[tokio::test]
async fn a_native_tool_that_meets_a_dead_store_tells_the_model_nothing_internal() {
    let Some(redis) = RedisServer::own("native_store_failure", false).await else {
        return skip(
            "AI_TOOLS_REQUIRE_REDIS",
            "a_native_tool_that_meets_a_dead_store",
            "redis-server is not on the PATH (.ci/run installs it)",
        )
        .unwrap_or(());
    };
    let store = RedisStore::connect(&redis.url).await.expect("connects");
    let shared: Arc<dyn AliasStore> = Arc::new(store.clone());
    // One tool registers through the manager, one asks the store itself.
    let create = NativeTool::new::<String, _, _>(
        "create",
        "Creates a link.",
        |ctx: ToolContext, id: String| async move {
            Ok::<_, ToolError>(ctx.alias_manager().register("link", &id).await?)
        },
    );
    let list = NativeTool::new::<String, _, _>("list", "Lists links.", {
        let shared = shared.clone();
        move |_: ToolContext, _: String| {
            let shared = shared.clone();
            async move { Ok::<_, ToolError>(shared.list("c", "link").await?.join(" ")) }
        }
    });
    let aliases = Arc::new(AliasManager::with_store(shared.clone(), "c"));
    let options = proto_ai_tools::CallOptions::new();
    let made = create
        .call(aliases.clone(), &format!("\"{}\"", uuid(1)), &options)
        .await;
    assert!(!made.is_error && made.output == "link-1", "{made:?}");

    redis.stop();
    let port = redis.url.rsplit(':').next().unwrap_or_default().to_owned();
    for (tool, args) in [
        (&create, format!("\"{}\"", uuid(2))),
        (&list, "\"\"".to_owned()),
    ] {
        let result = tool.call(aliases.clone(), &args, &options).await;
        assert!(result.is_error, "{result:?}");
        assert!(
            result.output.contains("the alias store is unavailable")
                && result.output.contains("try again in a moment"),
            "{}",
            result.output
        );
        for internal in [
            "127.0.0.1",
            port.as_str(),
            "os error",
            "refused",
            "Connection",
            "broken pipe",
        ] {
            assert!(
                !result.output.contains(internal),
                "the model is told `{internal}`: {}",
                result.output
            );
        }
    }
}
