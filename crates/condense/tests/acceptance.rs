//! The acceptance cases 1–29 of specs/extension-formats.md §10 (cost, tokens, truncation,
//! context management, effective history); 30–46 and the older eras are in acceptance_summary.rs.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use roo_condense::*;
use serde_json::{json, Value};
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
            ..WillManageContextOptions::default()
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
