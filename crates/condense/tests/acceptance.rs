//! The 46 acceptance cases of specs/extension-formats.md §10, plus the older eras.
#![allow(clippy::unwrap_used)]

use roo_condense::condense::{CONDENSE_PROMPT, LEGACY_FINAL_REQUEST};
use roo_condense::cost::{
    combine_api_requests, combine_command_sequences, is_context_management_event,
    CONTEXT_MANAGEMENT_EVENTS,
};
use roo_condense::history::{
    extract_command_blocks, inject_synthetic_tool_results, merge_consecutive_api_messages,
    tool_result_to_text, tool_use_to_text, DEFERRED_TOOL_RESULT,
};
use roo_condense::model::{get_model_max_output_tokens, MaxOutputArgs};
use roo_condense::store;
use roo_condense::*;
use serde_json::{json, Map, Value};

const HEAD: Era = Era::HEAD;

fn prices() -> ModelInfo {
    serde_json::from_value(
        json!({"inputPrice": 3.0, "outputPrice": 15.0, "cacheWritesPrice": 3.75, "cacheReadsPrice": 0.3}),
    )
    .unwrap()
}

fn msg(role: &str, content: Value, ts: f64) -> Value {
    json!({"role": role, "content": content, "ts": ts})
}

fn u(text: &str, ts: f64) -> Value {
    msg("user", json!(text), ts)
}

fn a(text: &str, ts: f64) -> Value {
    msg("assistant", json!(text), ts)
}

fn texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

// ---------------------------------------------------------------- cost (1–8)

#[test]
fn case_01_04_anthropic_cost() {
    let info = prices();
    let r = calculate_api_cost_anthropic(&info, 1000.0, 500.0, None, None);
    assert_eq!(r.total_cost, 0.0105);
    assert_eq!(
        (r.total_input_tokens, r.total_output_tokens),
        (1000.0, 500.0)
    );
    let r = calculate_api_cost_anthropic(&info, 1000.0, 500.0, Some(2000.0), None);
    assert_eq!(r.total_cost, 0.018000000000000002);
    assert_eq!(r.total_input_tokens, 3000.0);
    let r = calculate_api_cost_anthropic(&info, 1000.0, 500.0, None, Some(3000.0));
    assert_eq!(r.total_cost, 0.0114);
    assert_eq!(r.total_input_tokens, 4000.0);
    let r = calculate_api_cost_anthropic(&info, 1000.0, 500.0, Some(2000.0), Some(3000.0));
    assert_eq!(r.total_cost, 0.0189);
    assert_eq!(r.total_input_tokens, 6000.0);
    let none = ModelInfo::default();
    let r = calculate_api_cost_anthropic(&none, 1000.0, 500.0, Some(2000.0), Some(3000.0));
    assert_eq!((r.total_cost, r.total_input_tokens), (0.0, 6000.0));
    let in_out: ModelInfo =
        serde_json::from_value(json!({"inputPrice": 3.0, "outputPrice": 15.0})).unwrap();
    let r = calculate_api_cost_anthropic(&in_out, 1000.0, 500.0, Some(2000.0), Some(3000.0));
    assert_eq!((r.total_cost, r.total_input_tokens), (0.0105, 6000.0));
}

#[test]
fn case_05_openai_cost() {
    let info = prices();
    let r = calculate_api_cost_openai(&info, 3000.0, 500.0, Some(2000.0), None, None);
    assert!((r.total_cost - 0.018).abs() < 1e-12);
    assert_eq!(r.total_input_tokens, 3000.0);
    let r = calculate_api_cost_openai(&info, 4000.0, 500.0, None, Some(3000.0), None);
    assert_eq!(r.total_cost, 0.0114);
    let r = calculate_api_cost_openai(&info, 6000.0, 500.0, Some(2000.0), Some(3000.0), None);
    assert_eq!(r.total_cost, 0.0189);
    let r = calculate_api_cost_openai(
        &ModelInfo::default(),
        1000.0,
        500.0,
        Some(2000.0),
        Some(3000.0),
        None,
    );
    assert_eq!((r.total_cost, r.total_input_tokens), (0.0, 1000.0));
    let r = calculate_api_cost_openai(&info, 0.0, 0.0, None, None, None);
    assert_eq!(r.total_cost, 0.0);
}

fn long_context(base: Value, tiers: Option<Value>) -> ModelInfo {
    let mut info = base;
    let mut lc = json!({"thresholdTokens": 272000, "inputPriceMultiplier": 2, "outputPriceMultiplier": 1.5,
        "cacheWritesPriceMultiplier": 2, "cacheReadsPriceMultiplier": 2});
    if let Some(t) = tiers {
        lc["appliesToServiceTiers"] = t;
    }
    info["longContextPricing"] = lc;
    serde_json::from_value(info).unwrap()
}

#[test]
fn case_06_08_long_context_pricing() {
    let info = long_context(
        json!({"inputPrice": 3, "outputPrice": 15, "cacheWritesPrice": 3.75, "cacheReadsPrice": 0.3}),
        None,
    );
    let r = calculate_api_cost_openai(&info, 272000.0, 1000.0, None, Some(100000.0), None);
    assert!((r.total_cost - 0.561).abs() < 1e-9, "{}", r.total_cost);
    let info = long_context(
        json!({"inputPrice": 2.5, "outputPrice": 15, "cacheWritesPrice": 5, "cacheReadsPrice": 0.25}),
        None,
    );
    let r = calculate_api_cost_openai(&info, 300000.0, 1000.0, Some(20000.0), Some(100000.0), None);
    assert!((r.total_cost - 1.1725).abs() < 1e-9, "{}", r.total_cost);
    let info = long_context(
        json!({"inputPrice": 5, "outputPrice": 30, "cacheReadsPrice": 0.5}),
        Some(json!(["default", "flex"])),
    );
    let r = calculate_api_cost_openai(
        &info,
        300000.0,
        1000.0,
        None,
        Some(100000.0),
        Some("priority"),
    );
    assert!((r.total_cost - 1.08).abs() < 1e-9, "{}", r.total_cost);
    // The same request on the default tier pays the surcharge.
    let r = calculate_api_cost_openai(&info, 300000.0, 1000.0, None, Some(100000.0), None);
    assert!(r.total_cost > 1.08);
}

// ---------------------------------------------------------------- tokens (9–10)

#[test]
fn case_09_10_tiktoken() {
    assert_eq!(tiktoken(&[]), 0.0);
    assert_eq!(tiktoken(&[json!({"type": "text", "text": ""})]), 0.0);
    assert_eq!(tiktoken(&[json!({"type": "text"})]), 0.0);
    assert_eq!(
        tiktoken(&[json!({"type": "text", "text": "Hello world"})]),
        3.0
    );
    let image = |data: Option<String>| {
        let mut source = json!({"type": "base64", "media_type": "image/png"});
        if let Some(d) = data {
            source["data"] = json!(d);
        }
        json!({"type": "image", "source": source})
    };
    assert_eq!(tiktoken(&[image(Some("X".repeat(1000)))]), 48.0);
    assert_eq!(tiktoken(&[image(Some("A".repeat(96)))]), 15.0);
    assert_eq!(tiktoken(&[image(None)]), 450.0);
    // Special-token text is ordinary text.
    assert!(tiktoken(&[json!({"type": "text", "text": "<|endoftext|>"})]) > 1.5);
    // One ceil per call.
    let one = json!({"type": "text", "text": "Hello"});
    assert_eq!(count_tokens(&[one.clone(), one.clone()]), 3.0);
    assert_eq!(
        count_tokens(std::slice::from_ref(&one)) + count_tokens(&[one]),
        4.0
    );
}

// ---------------------------------------------------------------- truncation (11–16)

fn conversation(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                u(&format!("Message {}", i + 1), (i + 1) as f64)
            } else {
                a(&format!("Message {}", i + 1), (i + 1) as f64)
            }
        })
        .collect()
}

#[test]
fn case_11_14_truncate() {
    let three = conversation(3);
    let r = truncate_conversation(&three, 0.5, HEAD);
    assert_eq!(r.messages_removed, 0);
    assert_eq!(r.messages, three);

    let five = conversation(5);
    let r = truncate_conversation(&five, 0.5, HEAD);
    let id = r.truncation_id.clone().unwrap();
    assert_eq!(r.messages_removed, 2);
    assert_eq!(r.messages.len(), 6);
    assert_eq!(r.messages[1]["truncationParent"], json!(id));
    assert_eq!(r.messages[2]["truncationParent"], json!(id));
    assert_eq!(r.messages[3]["isTruncationMarker"], json!(true));
    assert_eq!(r.messages[3]["role"], json!("user"));
    assert_eq!(r.messages[3]["truncationId"], json!(id));
    assert!(r.messages[4].get("truncationParent").is_none());
    assert!(r.messages[5].get("truncationParent").is_none());
    // Tags go at the end of the object.
    let keys: Vec<&String> = r.messages[1].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["role", "content", "ts", "truncationParent"]);

    let seven = conversation(7);
    assert_eq!(truncate_conversation(&seven, 0.3, HEAD).messages_removed, 0);
    let r = truncate_conversation(&seven, 0.0, HEAD);
    assert_eq!((r.messages_removed, &r.messages), (0, &seven));

    let four = conversation(4);
    let r = truncate_conversation(&four, 1.0, HEAD);
    assert_eq!(r.messages_removed, 2);
    assert_eq!(r.messages.len(), 5);
    assert_eq!(r.messages[3]["isTruncationMarker"], json!(true));
    assert!(r.messages[4].get("truncationParent").is_none());
}

#[test]
fn case_15_truncate_then_effective_then_cleanup() {
    let mut msgs = vec![u("Initial task", 1000.0)];
    for i in 1..=10 {
        let ts = 1000.0 + 100.0 * i as f64;
        msgs.push(if i % 2 == 1 {
            a(&format!("Response {i}"), ts)
        } else {
            u(&format!("Message {i}"), ts)
        });
    }
    let r = truncate_conversation(&msgs, 0.5, HEAD);
    assert_eq!(r.messages_removed, 4);
    let tagged = r
        .messages
        .iter()
        .filter(|m| m.get("truncationParent").is_some())
        .count();
    assert_eq!(tagged, 4);
    let marker = &r.messages[5];
    assert_eq!(
        marker["content"],
        json!("[Sliding window truncation: 4 messages hidden to reduce context]")
    );
    assert_eq!(marker["ts"], json!(1499));
    let effective = get_effective_api_history(&r.messages, HEAD);
    assert_eq!(effective.len(), 8);
    assert_eq!(effective[0]["content"], json!("Initial task"));
    assert_eq!(effective[1]["isTruncationMarker"], json!(true));
    let without_marker: Vec<Value> = r
        .messages
        .iter()
        .filter(|m| m.get("isTruncationMarker").is_none())
        .cloned()
        .collect();
    assert_eq!(get_effective_api_history(&without_marker, HEAD).len(), 11);
    let cleaned = cleanup_after_truncation(&without_marker);
    assert!(cleaned.iter().all(|m| m.get("truncationParent").is_none()));
}

#[test]
fn case_16_truncate_counts() {
    let mut twelve = vec![u("Initial", 1.0)];
    twelve.extend(conversation(11).into_iter().map(|mut m| {
        m["ts"] = json!(m["ts"].as_f64().unwrap() + 1.0);
        m
    }));
    assert_eq!(
        truncate_conversation(&twelve, 0.5, HEAD).messages_removed,
        4
    );
    assert_eq!(
        truncate_conversation(&conversation(2), 0.5, HEAD).messages_removed,
        0
    );
    let r = truncate_conversation(&conversation(3), 1.0, HEAD);
    assert_eq!((r.messages_removed, r.messages.len()), (2, 4));
    assert_eq!(r.messages[3]["isTruncationMarker"], json!(true));
    assert!(r.messages[0].get("truncationParent").is_none());
}

// ---------------------------------------------------------------- manageContext (17–22)

fn five_with_empty_last() -> Vec<Value> {
    vec![
        u("First message", 1.0),
        a("Second message", 2.0),
        u("Third message", 3.0),
        a("Fourth message", 4.0),
        u("", 5.0),
    ]
}

fn opts(total: f64, cw: f64, max: Option<f64>, auto: bool, pct: f64) -> ManageContextOptions {
    ManageContextOptions {
        messages: five_with_empty_last(),
        total_tokens: total,
        context_window: cw,
        max_tokens: max,
        auto_condense_context: auto,
        auto_condense_context_percent: pct,
        system_prompt: "System prompt".into(),
        task_id: "task".into(),
        ..ManageContextOptions::default()
    }
}

fn summary_provider() -> ScriptedProvider {
    let mut p = ScriptedProvider::new(vec![
        StreamChunk::Text {
            text: "This is ".into(),
        },
        StreamChunk::Text {
            text: "a summary".into(),
        },
        StreamChunk::Usage {
            input_tokens: 0.0,
            output_tokens: 150.0,
            cache_write_tokens: None,
            cache_read_tokens: None,
            total_cost: Some(0.05),
        },
    ]);
    p.token_count = Some(100.0);
    p
}

async fn run(o: &ManageContextOptions, p: &dyn SummaryProvider) -> ContextManagementResult {
    manage_context(o, p, &CancelToken::new()).await.unwrap()
}

#[tokio::test]
async fn case_17_no_condense_below_and_truncate_above() {
    let o = opts(59999.0, 100000.0, Some(30000.0), false, 100.0);
    let r = run(&o, &NoProvider).await;
    assert_eq!(
        r,
        ContextManagementResult {
            messages: o.messages.clone(),
            summary: String::new(),
            cost: 0.0,
            prev_context_tokens: 59999.0,
            ..ContextManagementResult::default()
        }
    );
    for total in [60001.0, 69999.0, 70001.0] {
        let o = opts(total, 100000.0, Some(30000.0), false, 100.0);
        let r = run(&o, &NoProvider).await;
        assert_eq!(r.messages_removed, Some(2));
        assert_eq!(r.messages.len(), 6);
        assert_eq!((r.summary.as_str(), r.cost), ("", 0.0));
        assert_eq!(r.prev_context_tokens, total);
        assert!(r.truncation_id.is_some());
    }
}

#[tokio::test]
async fn case_18_allowed_tokens_boundaries() {
    for (cw, max, below, above) in [
        (100000.0, Some(50000.0), 39999.0, 50001.0),
        (100000.0, None, 81807.0, 81809.0),
        (50000.0, Some(10000.0), 34999.0, 40001.0),
        (200000.0, Some(30000.0), 149999.0, 170001.0),
    ] {
        let r = run(&opts(below, cw, max, false, 100.0), &NoProvider).await;
        assert_eq!(r.messages_removed, None, "{cw} {max:?} {below}");
        let r = run(&opts(above, cw, max, false, 100.0), &NoProvider).await;
        assert_eq!(r.messages_removed, Some(2), "{cw} {max:?} {above}");
    }
}

#[tokio::test]
async fn case_19_auto_condense_at_threshold() {
    let mut p = summary_provider();
    p.token_count = None;
    let o = opts(60000.0, 100000.0, Some(30000.0), true, 50.0);
    let r = run(&o, &p).await;
    assert_eq!(p.requests().len(), 1);
    assert_eq!(r.prev_context_tokens, 60000.0);
    assert_eq!(r.summary, "This is a summary");
    assert_eq!(r.cost, 0.05);
    assert!(r.condense_id.is_some());
    // The environment details are part of an automatic summary.
    let mut o2 = o.clone();
    o2.environment_details = Some("<environment_details>x</environment_details>".into());
    let r2 = run(&o2, &p).await;
    let last = r2.messages.last().unwrap();
    assert_eq!(last["content"].as_array().unwrap().len(), 2);

    let mut p = summary_provider();
    p.token_count = None;
    let o = opts(40000.0, 100000.0, Some(30000.0), true, 50.0);
    let r = run(&o, &p).await;
    assert!(p.requests().is_empty());
    assert_eq!(
        r,
        ContextManagementResult {
            messages: o.messages.clone(),
            prev_context_tokens: 40000.0,
            ..ContextManagementResult::default()
        }
    );
}

#[tokio::test]
async fn case_20_profile_thresholds_and_fallback() {
    let with_profiles = |total: f64, global: f64, profiles: Value, id: &str| {
        let mut o = opts(total, 100000.0, Some(30000.0), true, global);
        o.profile_thresholds = profiles.as_object().unwrap().clone();
        o.current_profile_id = id.into();
        o
    };
    let p = summary_provider();
    run(&with_profiles(65000.0, 100.0, json!({"p1": 60}), "p1"), &p).await;
    assert_eq!(p.requests().len(), 1);
    let p = summary_provider();
    run(&with_profiles(80000.0, 75.0, json!({"p1": -1}), "p1"), &p).await;
    assert_eq!(p.requests().len(), 1);
    let p = summary_provider();
    let r = run(
        &with_profiles(50000.0, 80.0, json!({"other": 40}), "p1"),
        &p,
    )
    .await;
    assert!(p.requests().is_empty());
    assert_eq!(r.messages_removed, None);

    // Summarising fails: truncation follows.
    let mut failing = ScriptedProvider::new(vec![]);
    failing.error = Some("boom".into());
    let r = run(
        &opts(70001.0, 100000.0, Some(30000.0), true, 100.0),
        &failing,
    )
    .await;
    assert_eq!(r.messages_removed, Some(2));
    assert_eq!(r.messages.len(), 6);
    assert_eq!(r.error.as_deref(), Some("Condensing API call failed: boom"));
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseApiFailed));

    let p = summary_provider();
    run(&opts(70001.0, 100000.0, Some(30000.0), false, 100.0), &p).await;
    assert!(p.requests().is_empty());

    // An invalid threshold falls back to the global one, with a warning.
    let p = summary_provider();
    let r = run(&with_profiles(55000.0, 50.0, json!({"p1": 150}), "p1"), &p).await;
    assert_eq!(p.requests().len(), 1);
    assert!(r.threshold_warning.unwrap().contains("150"));
    let t = effective_threshold(50.0, &json!({"p1": 3}).as_object().unwrap().clone(), "p1");
    assert_eq!(t.threshold, 50.0);
    assert!(t.warning.is_some());
}

#[test]
fn case_21_will_manage_context() {
    let w = |total: f64, auto: bool, pct: f64, profiles: Value, last: f64| {
        will_manage_context(&WillManageContextOptions {
            total_tokens: total,
            context_window: 100000.0,
            max_tokens: Some(30000.0),
            auto_condense_context: auto,
            auto_condense_context_percent: pct,
            profile_thresholds: profiles.as_object().cloned().unwrap_or_default(),
            current_profile_id: "p1".into(),
            last_message_tokens: last,
        })
    };
    assert!(w(60000.0, true, 50.0, json!({}), 0.0));
    assert!(!w(40000.0, true, 50.0, json!({}), 0.0));
    assert!(w(60001.0, false, 100.0, json!({}), 0.0));
    assert!(!w(59999.0, false, 100.0, json!({}), 0.0));
    assert!(w(55000.0, true, 80.0, json!({"p1": 50}), 0.0));
    assert!(!w(55000.0, true, 80.0, json!({"p1": -1}), 0.0));
    assert!(!w(49000.0, true, 50.0, json!({}), 0.0));
    assert!(w(49000.0, true, 50.0, json!({}), 2000.0));
}

#[tokio::test]
async fn case_22_tokens_after_truncation() {
    let o = opts(70001.0, 100000.0, Some(30000.0), false, 100.0);
    let r = run(&o, &NoProvider).await;
    let after = r.new_context_tokens_after_truncation.unwrap();
    assert!(after >= count_tokens(&[json!({"type":"text","text":"System prompt"})]));
    assert!(after < r.prev_context_tokens);
    // The synchronous decision gives the same truncation.
    let d = decide_context(&o);
    assert_eq!(d.action, ContextAction::Truncate);
    let plan = d.truncation.unwrap();
    assert_eq!(plan.result.messages_removed, 2);
    assert_eq!(plan.new_context_tokens_after_truncation, after);
}

// ---------------------------------------------------------------- effective history (23–29)

fn tagged(mut m: Value, key: &str, id: &str) -> Value {
    m.as_object_mut().unwrap().insert(key.into(), json!(id));
    m
}

fn summary(text: &str, ts: f64, id: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "ts": ts, "isSummary": true, "condenseId": id})
}

#[test]
fn case_23_effective_history() {
    let base = vec![
        tagged(u("First", 1.0), "condenseParent", "X"),
        tagged(a("Second", 2.0), "condenseParent", "X"),
        tagged(u("Third", 3.0), "condenseParent", "X"),
        summary("Summary", 4.0, "X"),
    ];
    let e = get_effective_api_history(&base, HEAD);
    assert_eq!(e, vec![base[3].clone()]);
    let mut more = base.clone();
    more.push(a("New response after summary", 5.0));
    more.push(u("New user message", 6.0));
    assert_eq!(get_effective_api_history(&more, HEAD).len(), 3);
    let plain = conversation(3);
    assert_eq!(get_effective_api_history(&plain, HEAD), plain);
    let orphaned = base[..3].to_vec();
    assert_eq!(get_effective_api_history(&orphaned, HEAD).len(), 3);
}

#[test]
fn case_24_rewind_keeps_tagged_messages_after_summary() {
    let msgs = vec![
        tagged(u("First message", 1.0), "condenseParent", "c1"),
        tagged(a("First response", 2.0), "condenseParent", "c1"),
        tagged(u("Second message", 3.0), "condenseParent", "c1"),
        summary("Summary", 4.0, "c1"),
        tagged(u("Third message", 5.0), "condenseParent", "c1"),
        tagged(a("Third response", 6.0), "condenseParent", "c1"),
    ];
    let e = get_effective_api_history(&msgs, HEAD);
    assert_eq!(e.len(), 3);
    assert_eq!(texts(&e)[1..], ["Third message", "Third response"]);
}

#[test]
fn case_25_orphan_tool_results() {
    let tool_use =
        |id: &str| json!([{"type": "tool_use", "id": id, "name": "read_file", "input": {}}]);
    let tool_result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "ok"});
    let msgs = vec![
        tagged(u("Hello", 1.0), "condenseParent", "c1"),
        tagged(
            msg("assistant", tool_use("tool-orphan"), 2.0),
            "condenseParent",
            "c1",
        ),
        summary("Summary", 3.0, "c1"),
        msg("user", json!([tool_result("tool-orphan")]), 4.0),
    ];
    assert_eq!(
        get_effective_api_history(&msgs, HEAD),
        vec![msgs[2].clone()]
    );

    let mixed = vec![
        summary("Summary", 3.0, "c1"),
        msg("assistant", tool_use("tool-valid"), 4.0),
        msg(
            "user",
            json!([tool_result("tool-orphan"), tool_result("tool-valid")]),
            5.0,
        ),
    ];
    let e = get_effective_api_history(&mixed, HEAD);
    assert_eq!(e[2]["content"], json!([tool_result("tool-valid")]));

    let text_and_orphan = vec![
        summary("Summary", 3.0, "c1"),
        msg(
            "user",
            json!([{"type": "text", "text": "Note"}, tool_result("tool-orphan")]),
            4.0,
        ),
    ];
    let e = get_effective_api_history(&text_and_orphan, HEAD);
    assert_eq!(e[1]["content"], json!([{"type": "text", "text": "Note"}]));
}

#[test]
fn case_26_truncation_inside_summary_range() {
    let marker = json!({"role": "assistant", "content": "[Sliding window truncation: 1 messages hidden to reduce context]",
        "ts": 4, "isTruncationMarker": true, "truncationId": "t1"});
    let msgs = vec![
        tagged(u("First", 1.0), "condenseParent", "c1"),
        summary("Summary", 2.0, "c1"),
        tagged(a("Response", 3.0), "truncationParent", "t1"),
        marker.clone(),
        u("After truncation", 5.0),
    ];
    let e = get_effective_api_history(&msgs, HEAD);
    assert_eq!(e, vec![msgs[1].clone(), marker, msgs[4].clone()]);
}

#[test]
fn case_27_nested_summaries() {
    let mut s1 = summary("S1", 399.0, "c1");
    s1["condenseParent"] = json!("c2");
    let msgs = vec![
        tagged(u("Build the API", 100.0), "condenseParent", "c1"),
        tagged(a("Done", 200.0), "condenseParent", "c1"),
        s1,
        tagged(u("Add a database", 400.0), "condenseParent", "c2"),
        summary("S2", 599.0, "c2"),
        a("Database added", 600.0),
        u("Now test it", 700.0),
    ];
    let e = get_effective_api_history(&msgs, HEAD);
    assert_eq!(e.len(), 3);
    assert_eq!(e[0]["condenseId"], json!("c2"));
    assert_eq!(get_messages_since_last_summary(&e, HEAD), e);

    let triple = vec![
        tagged(summary("S1", 1.0, "c1"), "condenseParent", "c2"),
        tagged(u("w1", 2.0), "condenseParent", "c2"),
        tagged(summary("S2", 3.0, "c2"), "condenseParent", "c3"),
        tagged(u("w2", 4.0), "condenseParent", "c3"),
        summary("S3", 5.0, "c3"),
        u("Current work", 6.0),
    ];
    let e = get_effective_api_history(&triple, HEAD);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["condenseId"], json!("c3"));
    assert_eq!(e[1]["content"], json!("Current work"));
}

#[test]
fn case_28_cleanup_after_truncation() {
    let msgs = vec![
        tagged(u("orphan condensed", 1.0), "condenseParent", "gone"),
        tagged(u("valid condensed", 2.0), "condenseParent", "c1"),
        summary("Summary", 3.0, "c1"),
        tagged(u("orphan truncated", 4.0), "truncationParent", "gone-t"),
        tagged(u("valid truncated", 5.0), "truncationParent", "t1"),
        json!({"role": "user", "content": "marker", "ts": 6, "isTruncationMarker": true, "truncationId": "t1"}),
    ];
    let c = cleanup_after_truncation(&msgs);
    assert!(c[0].get("condenseParent").is_none());
    assert_eq!(c[1]["condenseParent"], json!("c1"));
    assert!(c[3].get("truncationParent").is_none());
    assert_eq!(c[4]["truncationParent"], json!("t1"));
    // Both tags, one orphaned: the valid one stays, at the end.
    let mut both = u("both", 7.0);
    both["truncationParent"] = json!("gone-t");
    both["condenseParent"] = json!("c1");
    both["extra"] = json!(1);
    let c = cleanup_after_truncation(&[both, msgs[2].clone()]);
    let keys: Vec<&String> = c[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["role", "content", "ts", "extra", "condenseParent"]);
    let plain = conversation(4);
    assert_eq!(cleanup_after_truncation(&plain), plain);
}

#[test]
fn case_29_messages_since_last_summary() {
    let plain = conversation(3);
    assert_eq!(get_messages_since_last_summary(&plain, HEAD), plain);
    let mut s = u("summary", 3.0);
    s["isSummary"] = json!(true);
    let msgs = vec![
        u("1", 1.0),
        a("2", 2.0),
        s.clone(),
        a("4", 4.0),
        u("5", 5.0),
    ];
    let r = get_messages_since_last_summary(&msgs, HEAD);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0]["ts"], json!(3.0));
    let mut s2 = s.clone();
    s2["ts"] = json!(6.0);
    let two = vec![s.clone(), a("4", 4.0), s2.clone(), a("7", 7.0)];
    assert_eq!(
        get_messages_since_last_summary(&two, HEAD),
        vec![s2, a("7", 7.0)]
    );
    assert!(get_messages_since_last_summary(&[], HEAD).is_empty());
}

// ---------------------------------------------------------------- summarizeConversation (30–38)

fn sum_opts(messages: Vec<Value>) -> SummarizeOptions {
    SummarizeOptions {
        messages,
        system_prompt: "System prompt".into(),
        task_id: "task".into(),
        ..SummarizeOptions::default()
    }
}

async fn summarize(o: &SummarizeOptions, p: &dyn SummaryProvider) -> SummarizeResponse {
    summarize_conversation(o, p, &CancelToken::new())
        .await
        .unwrap()
}

#[tokio::test]
async fn case_30_one_message() {
    let p = summary_provider();
    let msgs = vec![u("Only", 1.0)];
    let r = summarize(&sum_opts(msgs.clone()), &p).await;
    assert_eq!(r.messages, msgs);
    assert_eq!((r.cost, r.summary.as_str()), (0.0, ""));
    assert_eq!(r.new_context_tokens, None);
    assert_eq!(
        r.error_key,
        Some(CondenseErrorKey::CondenseNotEnoughMessages)
    );
    assert_eq!(
        r.error.as_deref(),
        Some("Not enough messages to condense context")
    );
    assert!(p.requests().is_empty());
}

#[tokio::test]
async fn case_31_fresh_start_summary() {
    let p = summary_provider();
    let msgs = conversation(7);
    let r = summarize(&sum_opts(msgs.clone()), &p).await;
    assert_eq!(r.messages.len(), 8);
    let id = r.condense_id.clone().unwrap();
    for m in &r.messages[..7] {
        assert_eq!(m["condenseParent"], json!(id));
    }
    let s = r.messages.last().unwrap();
    assert_eq!(s["role"], json!("user"));
    assert_eq!(s["isSummary"], json!(true));
    assert_eq!(s["condenseId"], json!(id));
    assert_eq!(s["ts"], json!(8));
    let text = s["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("## Conversation Summary") && text.contains("This is a summary"));
    assert_eq!(
        get_effective_api_history(&r.messages, HEAD),
        vec![s.clone()]
    );
    assert_eq!(r.cost, 0.05);
    assert_eq!(r.summary, "This is a summary");
    assert_eq!(r.new_context_tokens, Some(100.0));
    assert!(r.error.is_none());
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["role", "content", "ts", "isSummary", "condenseId"]);
}

#[tokio::test]
async fn case_32_active_workflows() {
    let p = summary_provider();
    let mut msgs = conversation(5);
    msgs[0]["content"] = json!("Hello <command name=\"prr\">/prr #123</command>");
    let r = summarize(&sum_opts(msgs), &p).await;
    let content = r.messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(content.len(), 2);
    let second = content[1]["text"].as_str().unwrap();
    assert!(second.contains("<system-reminder>"));
    assert!(second.contains("Active Workflows"));
    assert!(second.contains("<command name=\"prr\">"));
    let r = summarize(&sum_opts(conversation(5)), &p).await;
    let content = r.messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(content.len(), 1);
    assert!(!content[0]["text"]
        .as_str()
        .unwrap()
        .contains("<system-reminder>"));
}

#[tokio::test]
async fn case_33_empty_summary_and_invalid_handler() {
    let mut p = ScriptedProvider::new(vec![StreamChunk::Usage {
        input_tokens: 0.0,
        output_tokens: 0.0,
        cache_write_tokens: None,
        cache_read_tokens: None,
        total_cost: Some(0.02),
    }]);
    p.token_count = Some(100.0);
    let msgs = conversation(5);
    let r = summarize(&sum_opts(msgs.clone()), &p).await;
    assert_eq!(r.messages, msgs);
    assert_eq!(r.cost, 0.02);
    assert_eq!(r.summary, "");
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseFailed));
    assert_eq!(r.new_context_tokens, None);
    let r = summarize(&sum_opts(msgs), &NoProvider).await;
    assert_eq!(r.cost, 0.0);
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseHandlerInvalid));
}

#[tokio::test]
async fn case_34_condensed_recently() {
    let mut s = u("Previous summary", 2.0);
    s["isSummary"] = json!(true);
    let msgs = vec![u("First message with /command", 1.0), s];
    let p = summary_provider();
    let r = summarize(&sum_opts(msgs.clone()), &p).await;
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondensedRecently));
    assert_eq!(r.messages, msgs);
    assert!(p.requests().is_empty());
}

#[tokio::test]
async fn case_35_the_request() {
    let p = summary_provider();
    let mut msgs = conversation(5);
    msgs[0]["content"] = json!("Initial ask");
    summarize(&sum_opts(msgs.clone()), &p).await;
    let mut custom = sum_opts(msgs.clone());
    custom.custom_condensing_prompt = Some("Custom prompt".into());
    summarize(&custom, &p).await;
    let mut blank = sum_opts(msgs.clone());
    blank.custom_condensing_prompt = Some("  ".into());
    summarize(&blank, &p).await;
    let reqs = p.requests();
    let sys = &reqs[0].system_prompt;
    assert!(sys.contains("You are a helpful AI assistant tasked with summarizing conversations."));
    assert!(sys.contains("CRITICAL: This is a summarization-only request"));
    assert!(sys.contains("CRITICAL: This summarization request is a SYSTEM OPERATION"));
    let last = |i: usize| reqs[i].messages.last().unwrap().clone();
    assert_eq!(last(0)["role"], json!("user"));
    assert!(last(0)["content"]
        .as_str()
        .unwrap()
        .contains("Your task is to create a detailed summary of the conversation"));
    assert_eq!(last(1)["content"], json!("Custom prompt"));
    assert_eq!(last(2)["content"], json!(CONDENSE_PROMPT));
    assert_eq!(reqs[0].messages[0]["content"], json!("Initial ask"));
    // Request messages carry only role and content.
    assert!(reqs[0]
        .messages
        .iter()
        .all(|m| m.as_object().unwrap().len() == 2));
}

#[test]
fn case_36_tool_texts() {
    assert_eq!(
        tool_use_to_text(
            &json!({"type":"tool_use","name":"read_file","input":{"path":"test.ts","encoding":"utf-8"}})
        ),
        "[Tool Use: read_file]\npath: test.ts\nencoding: utf-8"
    );
    assert_eq!(
        tool_use_to_text(&json!({"type":"tool_use","name":"execute_command","input":"ls -la"})),
        "[Tool Use: execute_command]\nls -la"
    );
    assert_eq!(
        tool_use_to_text(&json!({"type":"tool_use","name":"some_tool","input":{}})),
        "[Tool Use: some_tool]\n"
    );
    assert_eq!(
        tool_use_to_text(&json!({"type":"tool_use","name":"t","input":{"o":{"a":[1]}}})),
        "[Tool Use: t]\no: {\n  \"a\": [\n    1\n  ]\n}"
    );
    let r = |v: Value| tool_result_to_text(&v);
    assert_eq!(
        r(json!({"type":"tool_result","tool_use_id":"1","content":"File contents here"})),
        "[Tool Result]\nFile contents here"
    );
    assert_eq!(
        r(
            json!({"type":"tool_result","tool_use_id":"1","content":"File not found","is_error":true})
        ),
        "[Tool Result (Error)]\nFile not found"
    );
    assert_eq!(
        r(
            json!({"type":"tool_result","tool_use_id":"1","content":[{"type":"text","text":"First line"},{"type":"text","text":"Second line"}]})
        ),
        "[Tool Result]\nFirst line\nSecond line"
    );
    assert_eq!(
        r(
            json!({"type":"tool_result","tool_use_id":"1","content":[{"type":"text","text":"Screenshot:"},{"type":"image","source":{}}]})
        ),
        "[Tool Result]\nScreenshot:\n[Image]"
    );
    assert_eq!(
        r(json!({"type":"tool_result","tool_use_id":"1"})),
        "[Tool Result]"
    );
}

#[test]
fn case_37_extract_command_blocks() {
    let m = u("Run <command name=\"prr\">/prr #123</command> then <command name=\"mode\">/mode code</command>.", 1.0);
    assert_eq!(
        extract_command_blocks(Some(&m)),
        "<command name=\"prr\">/prr #123</command>\n<command name=\"mode\">/mode code</command>"
    );
    assert_eq!(extract_command_blocks(Some(&u("no commands", 1.0))), "");
    let blocks = msg(
        "user",
        json!([{"type":"text","text":"<command>a"},{"type":"text","text":"b</command>"}]),
        1.0,
    );
    assert_eq!(
        extract_command_blocks(Some(&blocks)),
        "<command>a\nb</command>"
    );
}

#[test]
fn case_38_inject_synthetic_tool_results() {
    let call = |id: &str| json!({"type":"tool_use","id":id,"name":"x","input":{}});
    let result = |id: &str| json!({"type":"tool_result","tool_use_id":id,"content":"ok"});
    let msgs = vec![u("go", 1.0), msg("assistant", json!([call("orphan")]), 2.0)];
    let out = inject_synthetic_tool_results(&msgs);
    assert_eq!(out.len(), 3);
    assert_eq!(out[2]["role"], json!("user"));
    assert_eq!(
        out[2]["content"],
        json!([{"type":"tool_result","tool_use_id":"orphan","content":DEFERRED_TOOL_RESULT}])
    );
    let spread = vec![
        msg("assistant", json!([call("a"), call("b")]), 1.0),
        msg("user", json!([result("a")]), 2.0),
        msg("user", json!([result("b")]), 3.0),
    ];
    assert_eq!(inject_synthetic_tool_results(&spread), spread);
    assert!(inject_synthetic_tool_results(&[]).is_empty());
}

// ---------------------------------------------------------------- metrics, merging, history (39–46)

fn api_req(info: Value) -> Value {
    json!({"type":"say","say":"api_req_started","text": info.to_string(),"ts":1})
}

fn condense(cost: f64, new: f64) -> Value {
    json!({"type":"say","say":"condense_context","ts":1,
        "contextCondense":{"summary":"s","cost":cost,"newContextTokens":new,"prevContextTokens":1000}})
}

#[test]
fn case_39_41_api_metrics() {
    let one = api_req(
        json!({"tokensIn":100,"tokensOut":200,"cacheWrites":5,"cacheReads":10,"cost":0.005}),
    );
    let m = get_api_metrics(std::slice::from_ref(&one));
    assert_eq!(
        (
            m.total_tokens_in,
            m.total_tokens_out,
            m.total_cache_writes,
            m.total_cache_reads
        ),
        (100.0, 200.0, Some(5.0), Some(10.0))
    );
    assert_eq!((m.total_cost, m.context_tokens), (0.005, 300.0));
    let two =
        api_req(json!({"tokensIn":50,"tokensOut":150,"cacheWrites":3,"cacheReads":7,"cost":0.003}));
    let m = get_api_metrics(&[one.clone(), two]);
    assert_eq!(
        (
            m.total_tokens_in,
            m.total_tokens_out,
            m.total_cache_writes,
            m.total_cache_reads
        ),
        (150.0, 350.0, Some(8.0), Some(17.0))
    );
    assert_eq!((m.total_cost, m.context_tokens), (0.008, 200.0));

    let m = get_api_metrics(&[condense(0.002, 500.0), condense(0.003, 400.0)]);
    assert_eq!((m.total_cost, m.context_tokens), (0.005, 400.0));
    let m = get_api_metrics(&[
        api_req(json!({"tokensIn":100,"tokensOut":200})),
        condense(0.0, 500.0),
    ]);
    assert_eq!(m.context_tokens, 500.0);
    let m = get_api_metrics(&[
        condense(0.0, 500.0),
        api_req(json!({"tokensIn":100,"tokensOut":200})),
        condense(0.0, 400.0),
        api_req(json!({"tokensIn":50,"tokensOut":150})),
    ]);
    assert_eq!(m.context_tokens, 200.0);

    let m = get_api_metrics(&[
        api_req(json!({"tokensIn":100})),
        api_req(json!({"tokensOut":200})),
        api_req(json!({"cacheWrites":5})),
        api_req(json!({"cacheReads":10})),
        api_req(json!({"cost":0.005})),
    ]);
    assert_eq!(
        (
            m.total_tokens_in,
            m.total_tokens_out,
            m.total_cache_writes,
            m.total_cache_reads,
            m.total_cost
        ),
        (100.0, 200.0, Some(5.0), Some(10.0), 0.005)
    );
    assert_eq!(m.context_tokens, 200.0);
    let m = get_api_metrics(&[api_req(json!({"tokensIn":null,"tokensOut":null}))]);
    assert_eq!(m.context_tokens, 0.0);
    let bad = json!({"type":"say","say":"api_req_started","text":"{invalid","ts":1});
    assert_eq!(get_api_metrics(&[bad]), TokenUsage::default());
    assert_eq!(get_api_metrics(&[]), TokenUsage::default());
}

#[test]
fn case_42_combine_command_sequences() {
    let out = combine_command_sequences(&[
        json!({"type":"ask","ask":"command","text":"ls","ts":1}),
        json!({"type":"ask","ask":"command_output","text":"file1.txt","ts":2}),
        json!({"type":"ask","ask":"command_output","text":"file2.txt","ts":3}),
    ]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["text"], json!("ls\nOutput:file1.txt\nfile2.txt"));
    let out = combine_command_sequences(&[
        json!({"type":"ask","ask":"use_mcp_server","text":"{\"type\":\"use_mcp_tool\",\"serverName\":\"s\",\"toolName\":\"t\"}","ts":1}),
        json!({"type":"say","say":"mcp_server_response","text":"Response data","ts":2}),
    ]);
    assert_eq!(out.len(), 1);
    assert_eq!(
        out[0]["text"],
        json!("{\"type\":\"use_mcp_tool\",\"serverName\":\"s\",\"toolName\":\"t\",\"response\":\"Response data\"}")
    );
    // Legacy request pairs.
    let out = combine_api_requests(&[
        json!({"type":"say","say":"api_req_started","text":"{\"request\":\"r\"}","ts":1}),
        json!({"type":"say","say":"api_req_finished","text":"{\"tokensIn\":3,\"cost\":0.1}","ts":2}),
    ]);
    assert_eq!(out.len(), 1);
    assert_eq!(
        out[0]["text"],
        json!("{\"request\":\"r\",\"tokensIn\":3,\"cost\":0.1}")
    );
}

#[test]
fn case_43_merge_consecutive() {
    let out = merge_consecutive_api_messages(
        &[
            u("A", 1.0),
            msg("user", json!([{"type":"text","text":"B"}]), 2.0),
            a("C", 3.0),
        ],
        &["user"],
    );
    assert_eq!(out.len(), 2);
    assert_eq!(
        out[0]["content"],
        json!([{"type":"text","text":"A"},{"type":"text","text":"B"}])
    );
    assert_eq!(out[0]["ts"], json!(2));
    let mut s = u("Summary", 1.0);
    s["isSummary"] = json!(true);
    let out = merge_consecutive_api_messages(&[s.clone(), u("After", 2.0)], &["user"]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["isSummary"], json!(true));
    assert_eq!(
        out[0]["content"],
        json!([{"type":"text","text":"Summary"},{"type":"text","text":"After"}])
    );
    let out = merge_consecutive_api_messages(&[u("Before", 1.0), s], &["user"]);
    assert_eq!(out.len(), 2);
}

#[test]
fn case_44_model_max_output_tokens() {
    let max = |id: &str, model: Value, settings: Option<Value>, format: Option<&str>| {
        get_model_max_output_tokens(&MaxOutputArgs {
            model_id: id,
            model: &model,
            settings: settings.as_ref(),
            format,
        })
    };
    assert_eq!(
        max(
            "claude-3-7-sonnet",
            json!({"maxTokens":8192,"contextWindow":200000}),
            None,
            None
        ),
        Some(8192.0)
    );
    let budget = json!({"requiredReasoningBudget":true,"maxTokens":64000,"contextWindow":200000});
    assert_eq!(
        max(
            "m",
            budget.clone(),
            Some(json!({"modelMaxTokens":32000})),
            None
        ),
        Some(32000.0)
    );
    assert_eq!(
        max(
            "m",
            budget.clone(),
            Some(json!({"modelMaxTokens":4000})),
            None
        ),
        Some(4000.0)
    );
    assert_eq!(max("m", budget, Some(json!({})), None), Some(16384.0));
    assert_eq!(
        max("m", json!({"contextWindow":200000}), None, None),
        Some(8192.0)
    );
    assert_eq!(
        max(
            "claude-sonnet-4",
            json!({"supportsReasoningBudget":true,"maxTokens":64000,"contextWindow":200000}),
            Some(json!({"enableReasoningEffort":false})),
            None
        ),
        Some(8192.0)
    );
    assert_eq!(
        max(
            "gemini-2.5-pro",
            json!({"supportsReasoningBudget":true,"maxTokens":65535,"contextWindow":1048576}),
            None,
            None
        ),
        Some(65535.0)
    );
    assert_eq!(
        max(
            "gpt-4",
            json!({"maxTokens":50000,"contextWindow":100000}),
            None,
            None
        ),
        Some(20000.0)
    );
    assert_eq!(
        max(
            "gpt-4",
            json!({"maxTokens":20000,"contextWindow":100000}),
            None,
            None
        ),
        Some(20000.0)
    );
    for id in ["gpt-5", "GPT-5-mini", "openai/gpt-5.1"] {
        assert_eq!(
            max(
                id,
                json!({"maxTokens":128000,"contextWindow":200000}),
                None,
                None
            ),
            Some(128000.0)
        );
    }
    assert_eq!(
        max(
            "gpt-4o",
            json!({"maxTokens":128000,"contextWindow":200000}),
            None,
            None
        ),
        Some(40000.0)
    );
    assert_eq!(
        max("x", json!({"contextWindow":1000}), None, Some("openai")),
        None
    );
}

#[test]
fn case_45_task_history_store_rules() {
    let items = vec![
        json!({"id":"old","ts":1}),
        json!({"id":"new","ts":3}),
        json!({"id":"mid","ts":2}),
    ];
    let ids: Vec<Value> = store::sort_history_items(&items)
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(ids, [json!("new"), json!("mid"), json!("old")]);
    let existing = json!({"id":"p","number":1,"ts":5,"task":"t","tokensIn":500,"tokensOut":200,"totalCost":0.1});
    let merged = store::upsert_history_item(
        Some(&existing),
        &json!({"status":"delegated","delegatedToId":"child-1","awaitingChildId":"child-1","childIds":["child-1"]}),
    );
    assert_eq!(
        (merged["tokensIn"].clone(), merged["tokensOut"].clone()),
        (json!(500), json!(200))
    );
    assert_eq!(merged["childIds"], json!(["child-1"]));
    let cleared = store::upsert_history_item(Some(&merged), &json!({"awaitingChildId": null}));
    assert!(cleared.get("awaitingChildId").is_none());
    let index = store::history_index(&items, 1000.0);
    assert_eq!(index["version"], json!(1));
    assert_eq!(store::read_history_index(&index).unwrap().len(), 3);
    assert!(store::read_history_index(&json!({"version":2,"entries":[]})).is_none());
    let legacy = vec![
        json!({"id":"no-dir","ts":1,"task":"gone"}),
        json!({"id":"has-item","ts":2,"task":"Original task text","tokensIn":999}),
        json!({"id":"to-write","ts":3,"task":"x"}),
    ];
    let plan = store::migration_plan(&legacy, |id| id != "no-dir", |id| id == "has-item");
    assert_eq!(plan, vec![legacy[2].clone()]);
}

#[test]
fn case_46_context_management_events() {
    for s in [
        "condense_context",
        "condense_context_error",
        "sliding_window_truncation",
    ] {
        assert!(is_context_management_event(Some(&json!(s))));
    }
    for v in [json!("text"), json!("error"), Value::Null] {
        assert!(!is_context_management_event(Some(&v)));
    }
    assert!(!is_context_management_event(None));
    assert_eq!(CONTEXT_MANAGEMENT_EVENTS.len(), 3);
}

// ---------------------------------------------------------------- older eras

#[tokio::test]
async fn seed_era_keeps_last_three_and_checks_growth() {
    let era = Era::parse("3.20.0").unwrap();
    let p = summary_provider();
    let msgs = conversation(8);
    let mut o = sum_opts(msgs.clone());
    o.era = era;
    o.prev_context_tokens = Some(10_000.0);
    let r = summarize(&o, &p).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    // Inserted before the last three; nothing removed (v3.17 – v3.28.0).
    assert_eq!(r.messages.len(), 9);
    let s = &r.messages[5];
    assert_eq!(s["role"], json!("assistant"));
    assert_eq!(s["content"], json!("This is a summary"));
    assert_eq!(s["ts"].as_f64(), msgs[5]["ts"].as_f64());
    assert_eq!(s["isSummary"], json!(true));
    // outputTokens (150) + countTokens([system, …keep]) (100).
    assert_eq!(r.new_context_tokens, Some(250.0));
    let req = &p.requests()[0];
    assert_eq!(req.system_prompt, CONDENSE_PROMPT);
    assert_eq!(
        req.messages.last().unwrap()["content"],
        json!(LEGACY_FINAL_REQUEST)
    );
    assert_eq!(req.messages.len(), 6);

    // The context grew: error, messages unchanged.
    o.prev_context_tokens = Some(250.0);
    let r = summarize(&o, &p).await;
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseContextGrew));
    assert_eq!(r.messages, msgs);
    assert_eq!(r.cost, 0.05);

    // A summary among the last three: condensed recently.
    let mut recent = msgs.clone();
    recent[6]["isSummary"] = json!(true);
    o.messages = recent;
    o.prev_context_tokens = None;
    assert_eq!(
        summarize(&o, &p).await.error_key,
        Some(CondenseErrorKey::CondensedRecently)
    );
    // Four messages or fewer: not enough.
    o.messages = conversation(4);
    assert_eq!(
        summarize(&o, &p).await.error_key,
        Some(CondenseErrorKey::CondenseNotEnoughMessages)
    );
}

#[tokio::test]
async fn destructive_and_tagged_eras() {
    let p = summary_provider();
    let msgs = conversation(8);
    let mut o = sum_opts(msgs.clone());
    o.era = Era::parse("3.30.0").unwrap();
    let r = summarize(&o, &p).await;
    assert_eq!(r.messages.len(), 5);
    assert_eq!(r.messages[0], msgs[0]);
    assert_eq!(r.messages[2..], msgs[5..]);

    o.era = Era::parse("3.40.0").unwrap();
    let r = summarize(&o, &p).await;
    let id = r.condense_id.clone().unwrap();
    assert_eq!(r.messages.len(), 9);
    assert!(r.messages[0].get("condenseParent").is_none());
    assert!(r.messages[1..5]
        .iter()
        .all(|m| m["condenseParent"] == json!(id)));
    let s = &r.messages[5];
    assert_eq!(s["content"][0]["type"], json!("reasoning"));
    assert_eq!(
        s["ts"].as_f64(),
        Some(msgs[5]["ts"].as_f64().unwrap() - 1.0)
    );
    let e = get_effective_api_history(&r.messages, o.era);
    assert_eq!(e.len(), 5);

    // Before v3.36 truncation deletes.
    let r = truncate_conversation(&conversation(5), 0.5, Era::parse("3.30").unwrap());
    assert_eq!(
        (r.messages.len(), r.messages_removed, r.truncation_id),
        (3, 2, None)
    );
}

#[tokio::test]
async fn manager_decides_and_falls_back() {
    use std::sync::Arc;
    let mut failing = ScriptedProvider::new(vec![]);
    failing.error = Some("overloaded".into());
    let manager = CondensationManager::new(
        CondenseSettings {
            auto_condense_context_percent: 50.0,
            ..CondenseSettings::default()
        },
        Arc::new(failing),
    );
    let input = ContextInput {
        messages: five_with_empty_last(),
        total_tokens: 70001.0,
        context_window: 100000.0,
        max_tokens: Some(30000.0),
        system_prompt: "System prompt".into(),
        profile_id: "default".into(),
        ..ContextInput::default()
    };
    let d = manager.decide(&input);
    assert_eq!(d.action, ContextAction::Summarize);
    assert!(d.truncate_on_failure);
    let r = manager
        .manage_context(&input, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(r.messages_removed, Some(2));
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseApiFailed));

    // A valid condensing provider takes precedence.
    let manager = manager.with_condensing_provider(Arc::new(summary_provider()));
    let r = manager
        .manage_context(&input, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(r.summary, "This is a summary");
    assert!(manager.will_manage_context(&input, 0.0));
}

#[tokio::test]
async fn cancelled_summaries_reject() {
    let cancel = CancelToken::new();
    cancel.cancel();
    let r = summarize_conversation(&sum_opts(conversation(5)), &summary_provider(), &cancel).await;
    assert_eq!(r, Err(Cancelled));
}

#[test]
fn profile_thresholds_map_accepts_any_value() {
    let mut m = Map::new();
    m.insert("p".into(), json!("60"));
    let t = effective_threshold(80.0, &m, "p");
    assert_eq!(t.threshold, 80.0);
    assert!(t.warning.is_some());
}
