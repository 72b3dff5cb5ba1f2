//! The OpenAI-compatible provider against a local server speaking the chat-completions streaming
//! format: a normal stream, 429 then success, a 5xx that never recovers, a timeout, a cancelled call.
#![allow(clippy::unwrap_used)]

use roo_condense::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Copy)]
enum Reply {
    /// Stream these text deltas, then usage with a cost, then `[DONE]`.
    Stream,
    /// 429 with `Retry-After: 0`.
    TooMany,
    /// 503.
    Unavailable,
    /// Headers and one delta, then nothing (the connection stays open).
    Stall,
}

struct Server {
    base_url: String,
    hits: Arc<AtomicUsize>,
    bodies: Arc<Mutex<Vec<Value>>>,
}

async fn read_request(sock: &mut TcpStream) -> Option<Value> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    serde_json::from_slice(&buf[header_end..]).ok()
}

async fn write_chunk(sock: &mut TcpStream, data: &str) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
        .await?;
    sock.flush().await
}

async fn serve(mut sock: TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::TooMany | Reply::Unavailable => {
            let (status, body) = match reply {
                Reply::TooMany => (
                    "429 Too Many Requests",
                    r#"{"error":{"message":"rate limited"}}"#,
                ),
                _ => (
                    "503 Service Unavailable",
                    r#"{"error":{"message":"overloaded"}}"#,
                ),
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            sock.write_all(resp.as_bytes()).await
        }
        Reply::Stream | Reply::Stall => {
            sock.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
            )
            .await?;
            let delta = |t: &str| {
                format!(
                    "data: {}\n\n",
                    json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
                )
            };
            write_chunk(&mut sock, &delta("This is ")).await?;
            if matches!(reply, Reply::Stall) {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return Ok(());
            }
            // One event split across two writes, and a comment line.
            let second = delta("a summary");
            let (x, y) = second.split_at(20);
            write_chunk(&mut sock, x).await?;
            write_chunk(&mut sock, y).await?;
            write_chunk(&mut sock, ": keep-alive\n\n").await?;
            let usage = json!({"id":"c1","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":150,
                "prompt_tokens_details":{"cached_tokens":200},"cost":0.0042}});
            write_chunk(&mut sock, &format!("data: {usage}\n\n")).await?;
            write_chunk(&mut sock, "data: [DONE]\n\n").await?;
            sock.write_all(b"0\r\n\r\n").await?;
            sock.flush().await
        }
    }
}

/// A server that answers the n-th request with `script[n]` (the last entry repeats).
async fn start(script: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let (h, b) = (hits.clone(), bodies.clone());
    tokio::spawn(async move {
        // Bounded: a test never needs more than a handful of connections.
        for _ in 0..16 {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let n = h.fetch_add(1, Ordering::SeqCst);
            let reply = script[n.min(script.len() - 1)];
            let bodies = b.clone();
            tokio::spawn(async move {
                if let Some(body) = read_request(&mut sock).await {
                    bodies.lock().unwrap().push(body);
                }
                let _ = serve(sock, reply).await;
            });
        }
    });
    Server {
        base_url: format!("http://{addr}/v1"),
        hits,
        bodies,
    }
}

fn provider(server: &Server, idle_ms: u64) -> OpenAiCompatibleProvider {
    OpenAiCompatibleProvider::new(OpenAiCompatibleConfig {
        base_url: server.base_url.clone(),
        api_key: Some("test-key".into()),
        model: "test-model".into(),
        idle_timeout_ms: idle_ms,
        retry_base_delay_ms: 10,
        max_retries: 2,
        ..OpenAiCompatibleConfig::default()
    })
}

fn history() -> Vec<Value> {
    (1..=6)
        .map(|i| {
            json!({"role": if i % 2 == 1 {"user"} else {"assistant"}, "content": format!("message {i}"), "ts": i})
        })
        .collect()
}

fn options() -> SummarizeOptions {
    SummarizeOptions {
        messages: history(),
        system_prompt: "System".into(),
        task_id: "t".into(),
        ..SummarizeOptions::default()
    }
}

#[tokio::test]
async fn streams_a_summary_with_its_cost() {
    let server = start(vec![Reply::Stream]).await;
    let p = provider(&server, 5_000);
    let r = summarize_conversation(&options(), &p, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(r.error, None);
    assert_eq!(r.summary, "This is a summary");
    assert_eq!(r.cost, 0.0042);
    assert_eq!(r.messages.len(), 7);
    let body = server.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["model"], json!("test-model"));
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["messages"][0]["role"], json!("system"));
    // system + 6 history messages + the instructions.
    assert_eq!(body["messages"].as_array().unwrap().len(), 8);
}

#[tokio::test]
async fn retries_after_429_then_succeeds() {
    let server = start(vec![Reply::TooMany, Reply::Stream]).await;
    let p = provider(&server, 5_000);
    let r = summarize_conversation(&options(), &p, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(r.summary, "This is a summary");
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn gives_up_after_the_retries() {
    let server = start(vec![Reply::Unavailable]).await;
    let p = provider(&server, 5_000);
    let r = summarize_conversation(&options(), &p, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseApiFailed));
    assert_eq!(
        r.error.as_deref(),
        Some("Condensing API call failed: 503 overloaded")
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 3);
    assert_eq!(r.messages, history());
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let server = start(vec![Reply::Stall]).await;
    let p = provider(&server, 300);
    let r = summarize_conversation(&options(), &p, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseApiFailed));
    assert!(r.error.unwrap().contains("timed out"));
    assert_eq!(r.messages, history());
}

#[tokio::test]
async fn a_cancelled_call_stops() {
    let server = start(vec![Reply::Stall]).await;
    let p = provider(&server, 30_000);
    let cancel = CancelToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c.cancel();
    });
    let r = summarize_conversation(&options(), &p, &cancel).await;
    assert_eq!(r, Err(Cancelled));
    // Through the manager, the fallback does not run either: the call as a whole is cancelled.
    let manager = CondensationManager::new(CondenseSettings::default(), Arc::new(p));
    let input = ContextInput {
        messages: history(),
        total_tokens: 95_000.0,
        context_window: 100_000.0,
        ..ContextInput::default()
    };
    let cancel = CancelToken::new();
    cancel.cancel();
    assert_eq!(
        manager.manage_context(&input, &cancel).await,
        Err(Cancelled)
    );
}

#[tokio::test]
async fn https_endpoints_are_supported_and_bad_schemes_are_clear_errors() {
    // An https endpoint builds a working client: the call fails on the connection (nothing
    // listens on port 1), not on a missing TLS stack.
    let https = OpenAiCompatibleProvider::new(OpenAiCompatibleConfig {
        base_url: "https://127.0.0.1:1/v1".into(),
        model: "m".into(),
        max_retries: 0,
        ..OpenAiCompatibleConfig::default()
    });
    let r = summarize_conversation(&options(), &https, &CancelToken::new())
        .await
        .unwrap();
    let error = r.error.unwrap();
    assert!(!error.contains("TLS"), "{error}");
    assert!(!error.contains("baseUrl"), "{error}");

    let ftp = OpenAiCompatibleProvider::new(OpenAiCompatibleConfig {
        base_url: "ftp://127.0.0.1/v1".into(),
        model: "m".into(),
        ..OpenAiCompatibleConfig::default()
    });
    let r = summarize_conversation(&options(), &ftp, &CancelToken::new())
        .await
        .unwrap();
    assert!(r.error.unwrap().contains("must start with http"));
}
