//! The acceptance cases 30–46 of specs/extension-formats.md §10 (summaries, metrics, merging,
//! history) and the older eras; 1–29 are in acceptance.rs.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
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
// ---------------------------------------------------------------- summarizeConversation (30–38)

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
