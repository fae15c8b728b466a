// Whole-service mode derives `fetch_service_get_url` for `GetURL` and for
// `GetUrl`: refused, with the fix (an overlay names one of them).
mod gentools {
    proto_ai_tools::ai_tools!("whole-service-names-clash.proto", services = ["cases.v1.FetchService"]);
}

fn main() {}
