//! [`EmbeddingsEndpoint`]: an OpenAI-compatible `POST /v1/embeddings`,
//! asked with hyper's client.

use std::sync::mpsc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use serde_json::{Value, json};

use super::{EmbeddingError, EmbeddingSource};

/// How many texts one request carries.
const BATCH: usize = 64;
/// The largest answer an [`EmbeddingsEndpoint`] reads, in bytes: 64
/// vectors of 4,096 numbers written out as JSON text are about 6 MB.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// How long one request to an [`EmbeddingsEndpoint`] may take, connection
/// included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

type Client = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// One request to the endpoint's thread: the texts, and where the answer
/// goes.
type Job = (
    Vec<String>,
    mpsc::SyncSender<Result<Vec<Vec<f32>>, EmbeddingError>>,
);

/// An OpenAI-compatible embeddings endpoint: `POST {url}/v1/embeddings`
/// with `{"model": …, "input": [texts]}`, answered with
/// `{"data": [{"index": i, "embedding": [numbers]}]}`, as
/// text-embeddings-inference, Ollama, vLLM and OpenAI serve it.
///
/// The texts go in batches of 64; an answer is read up to
/// [`MAX_RESPONSE_BYTES`] and waited for up to [`REQUEST_TIMEOUT`]. Plain
/// `http://` and `https://` (rustls, the system's roots) both work. The
/// requests are made on a thread of the endpoint's own, so that
/// [`embed`](EmbeddingSource::embed) may be called from anywhere, inside an
/// async runtime or not; it blocks its caller until the answer (a search
/// waits one round trip for its query's vector).
///
/// # Examples
///
/// ```no_run
/// use proto_ai_tools::toolkit::semantic::{EmbeddingSource, EmbeddingsEndpoint};
///
/// let endpoint = EmbeddingsEndpoint::new("http://127.0.0.1:8080", "all-MiniLM-L6-v2")?;
/// let vectors = endpoint.embed(&["stop a virtual machine"])?;
/// assert_eq!(vectors.len(), 1);
/// # Ok::<(), proto_ai_tools::toolkit::semantic::EmbeddingError>(())
/// ```
#[derive(Debug)]
pub struct EmbeddingsEndpoint {
    url: String,
    model: String,
    identity: String,
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

impl EmbeddingsEndpoint {
    /// The endpoint at `url` (its base, `http://host:port`, or with
    /// `/v1` or `/v1/embeddings` already on it), asked for `model`'s
    /// embeddings. Nothing is sent until the first
    /// [`embed`](EmbeddingSource::embed).
    ///
    /// # Errors
    ///
    /// [`EmbeddingError::Endpoint`]: `url` is not an `http://` or
    /// `https://` URL, or the client cannot be made (the system's TLS
    /// roots cannot be read for an `https://` URL).
    pub fn new(url: &str, model: &str) -> Result<Self, EmbeddingError> {
        let base = url.trim_end_matches('/');
        let full = if base.ends_with("/v1/embeddings") {
            base.to_owned()
        } else if base.ends_with("/v1") {
            format!("{base}/embeddings")
        } else {
            format!("{base}/v1/embeddings")
        };
        let https = full.starts_with("https://");
        if !https && !full.starts_with("http://") {
            return Err(EmbeddingError::Endpoint(format!(
                "the embeddings URL `{url}` is not an http:// or https:// URL"
            )));
        }
        if let Err(e) = full.parse::<http::Uri>() {
            return Err(EmbeddingError::Endpoint(format!(
                "the embeddings URL `{url}` is not a URL: {e}"
            )));
        }
        let provider = rustls::crypto::ring::default_provider();
        let connector = match hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(provider)
        {
            Ok(builder) => builder,
            // Plain HTTP needs no roots.
            Err(_) if !https => hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(
                rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                    rustls::crypto::ring::default_provider(),
                ))
                .with_safe_default_protocol_versions()
                .map_err(|e| EmbeddingError::Endpoint(format!("TLS cannot be set up: {e}")))?
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
            ),
            Err(e) => {
                return Err(EmbeddingError::Endpoint(format!(
                    "the system's TLS roots cannot be read, which `{url}` needs: {e}"
                )));
            }
        }
        .https_or_http()
        .enable_http1()
        .build();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                EmbeddingError::Endpoint(format!(
                    "the thread that asks the embeddings endpoint cannot start: {e}"
                ))
            })?;
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let asked = Asked {
            url: full.clone(),
            model: model.to_owned(),
        };
        std::thread::Builder::new()
            .name("ai-tools-embeddings".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let client: Client = hyper_util::client::legacy::Client::builder(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .build(connector);
                    while let Some((texts, answer)) = queue.recv().await {
                        let (client, asked) = (client.clone(), asked.clone());
                        tokio::spawn(async move {
                            let _ = answer.send(asked.post(&client, texts).await);
                        });
                    }
                });
            })
            .map_err(|e| {
                EmbeddingError::Endpoint(format!(
                    "the thread that asks the embeddings endpoint cannot start: {e}"
                ))
            })?;
        Ok(Self {
            identity: format!("endpoint:{full}\nmodel:{model}"),
            url: full,
            model: model.to_owned(),
            jobs,
        })
    }

    /// The URL posted to (`…/v1/embeddings`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }
}

impl EmbeddingSource for EmbeddingsEndpoint {
    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("embeddings endpoint {} (model {})", self.url, self.model)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let (answer, answered) = mpsc::sync_channel(1);
            let texts = chunk.iter().map(|t| (*t).to_owned()).collect();
            let gone = || {
                EmbeddingError::Endpoint(format!("the thread that asks {} has stopped", self.url))
            };
            self.jobs.send((texts, answer)).map_err(|_| gone())?;
            // The request has its own deadline; this one only guards a
            // thread that died.
            let got = answered
                .recv_timeout(REQUEST_TIMEOUT + Duration::from_secs(5))
                .map_err(|_| gone())??;
            vectors.extend(got);
        }
        Ok(vectors)
    }
}

/// Where a request goes and what it asks for.
#[derive(Clone)]
struct Asked {
    url: String,
    model: String,
}

impl Asked {
    /// Posts `texts` and reads their vectors, bounded in time and size.
    async fn post(
        &self,
        client: &Client,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let url = &self.url;
        let count = texts.len();
        let body = json!({"model": self.model, "input": texts}).to_string();
        let request = http::Request::post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| {
                EmbeddingError::Endpoint(format!("`{url}` is not a URL to post to: {e}"))
            })?;
        let exchange = async {
            let response = client.request(request).await.map_err(|e| {
                let mut cause = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(inner) = source {
                    cause = format!("{cause}: {inner}");
                    source = inner.source();
                }
                EmbeddingError::Endpoint(format!(
                    "the embeddings endpoint {url} could not be reached ({cause})"
                ))
            })?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| {
                    EmbeddingError::Endpoint(format!(
                        "the embeddings endpoint {url} answered a body that could not be read (at most {MAX_RESPONSE_BYTES} bytes are): {e}"
                    ))
                })?
                .to_bytes();
            let answer: Result<Value, _> = serde_json::from_slice(&body);
            if !status.is_success() {
                let said = answer
                    .ok()
                    .and_then(|v| {
                        v.pointer("/error/message")
                            .or_else(|| v.get("error"))
                            .or_else(|| v.get("message"))
                            .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned))
                    })
                    .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
                return Err(EmbeddingError::Endpoint(format!(
                    "the embeddings endpoint {url} answered {status} for model `{}`: {said}",
                    self.model
                )));
            }
            let answer = answer.map_err(|e| {
                EmbeddingError::Endpoint(format!(
                    "the embeddings endpoint {url} answered something other than JSON: {e}"
                ))
            })?;
            vectors(&answer, count).map_err(|what| {
                EmbeddingError::Endpoint(format!(
                    "the embeddings endpoint {url} answered no embeddings: {what}"
                ))
            })
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| {
                EmbeddingError::Endpoint(format!(
                    "the embeddings endpoint {url} did not answer within {} s",
                    REQUEST_TIMEOUT.as_secs()
                ))
            })?
    }
}

/// The `count` vectors of an answer's `data`, in the order of their
/// `index` (the order given when there is none).
fn vectors(answer: &Value, count: usize) -> Result<Vec<Vec<f32>>, String> {
    let data = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or("`data` is not a list")?;
    if data.len() != count {
        return Err(format!("{} embeddings for {count} texts", data.len()));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; count];
    for (position, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            Some(index) => index
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| *i < count)
                .ok_or_else(|| format!("`data[{position}].index` is not an index below {count}"))?,
            None => position,
        };
        let numbers = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("`data[{position}].embedding` is not a list of numbers (send floats, not base64)"))?;
        let vector = numbers
            .iter()
            .map(|n| n.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| {
                format!("`data[{position}].embedding` holds something other than numbers")
            })?;
        match vectors.get_mut(index) {
            Some(slot @ None) => *slot = Some(vector),
            _ => return Err(format!("index {index} comes twice")),
        }
    }
    vectors
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "an index is missing".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_read_in_index_order_and_checked() {
        let answer = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]}
        ]});
        assert_eq!(
            vectors(&answer, 2),
            Ok(vec![vec![1.0, 0.0], vec![0.0, 1.0]])
        );
        assert_eq!(vectors(&answer, 3), Err("2 embeddings for 3 texts".into()));
        assert!(
            vectors(&json!({"data": [{"embedding": "AAAA"}]}), 1)
                .is_err_and(|e| e.contains("not base64"))
        );
        assert!(
            vectors(
                &json!({"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}),
                2
            )
            .is_err_and(|e| e.contains("twice"))
        );
        assert_eq!(vectors(&json!({}), 1), Err("`data` is not a list".into()));
    }

    #[test]
    fn a_url_gets_its_path_and_a_bad_one_is_refused() {
        for (given, posted) in [
            ("http://h:1", "http://h:1/v1/embeddings"),
            ("http://h:1/", "http://h:1/v1/embeddings"),
            ("http://h:1/v1", "http://h:1/v1/embeddings"),
            ("https://h/api/v1/embeddings", "https://h/api/v1/embeddings"),
        ] {
            let endpoint = EmbeddingsEndpoint::new(given, "m").expect("an endpoint");
            assert_eq!(endpoint.url(), posted);
        }
        let refused = EmbeddingsEndpoint::new("ftp://h", "m").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the embeddings URL `ftp://h` is not an http:// or https:// URL"
        );
    }
}
