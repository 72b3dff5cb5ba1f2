//! The context rule across the release line: Roo Code up to 3.52 reserved any non-zero
//! `maxTokens` as it is; from 3.66 (Zoo Code) a `maxTokens` of zero or below reserves 8 192, and a
//! provider may measure the percentage against the window less the output reserve.

use roo_condense::{
    allowed_tokens, allowed_tokens_in, context_percent, decide_context, will_manage_context,
    ContextAction, Era, ManageContextOptions, WillManageContextOptions,
};
use serde_json::json;

fn will(
    total: f64,
    window: f64,
    max: Option<f64>,
    auto: bool,
    pct: f64,
) -> WillManageContextOptions {
    WillManageContextOptions {
        total_tokens: total,
        context_window: window,
        max_tokens: max,
        auto_condense_context: auto,
        auto_condense_context_percent: pct,
        current_profile_id: "default".into(),
        ..WillManageContextOptions::default()
    }
}

#[test]
fn a_negative_max_tokens_reserves_the_default_from_3_66() {
    assert_eq!(allowed_tokens(100_000.0, Some(-1.0)), 81_808.0);
    assert_eq!(allowed_tokens(100_000.0, Some(0.0)), 81_808.0);
    assert_eq!(allowed_tokens(100_000.0, Some(30_000.0)), 60_000.0);
    let roo = Era::ROO_LAST;
    assert_eq!(allowed_tokens_in(100_000.0, Some(-1.0), roo), 90_001.0);
    assert_eq!(allowed_tokens_in(100_000.0, Some(0.0), roo), 81_808.0);
    assert_eq!(
        allowed_tokens_in(100_000.0, Some(-1.0), Era(3, 65, 9)),
        90_001.0
    );
    assert_eq!(
        allowed_tokens_in(100_000.0, Some(-1.0), Era(3, 66, 0)),
        81_808.0
    );

    let o = will(85_000.0, 100_000.0, Some(-1.0), false, 100.0);
    assert!(will_manage_context(&o));
    assert!(!will_manage_context(&WillManageContextOptions {
        era: roo,
        ..o
    }));
}

#[test]
fn the_percentage_against_available_input_is_asked_for() {
    // 100 000 of 200 000 is 50 %; of the 136 000 left beside a 64 000 reserve, 73.5 %.
    assert_eq!(
        context_percent(100_000.0, 200_000.0, Some(64_000.0), false),
        50.0
    );
    let p = context_percent(100_000.0, 200_000.0, Some(64_000.0), true);
    assert!((p - 73.529_411_764_705_88).abs() < 1e-9, "{p}");
    // A reserve at or beyond the window leaves no room: 100 %. A negative one counts nothing.
    assert_eq!(context_percent(1.0, 50_000.0, Some(50_000.0), true), 100.0);
    assert_eq!(context_percent(1.0, 50_000.0, Some(60_000.0), true), 100.0);
    assert_eq!(
        context_percent(150_000.0, 200_000.0, Some(-200_000.0), true),
        75.0
    );

    let o = will(100_000.0, 200_000.0, Some(64_000.0), true, 70.0);
    assert!(!will_manage_context(&o));
    let opted = WillManageContextOptions {
        use_available_input_for_context_percent: true,
        ..o
    };
    assert!(will_manage_context(&opted));

    let decision = decide_context(&ManageContextOptions {
        messages: vec![json!({"role": "user", "content": "hello"})],
        total_tokens: 100_000.0,
        context_window: 200_000.0,
        max_tokens: Some(64_000.0),
        auto_condense_context_percent: 70.0,
        last_message_tokens: Some(0.0),
        use_available_input_for_context_percent: true,
        ..ManageContextOptions::default()
    });
    assert_eq!(decision.action, ContextAction::Summarize);
}
