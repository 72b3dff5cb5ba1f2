//! The folded file context of a summary: asked of the provider once a summary has come back, as
//! the extension calls `generateFoldedFileContext`.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use roo_condense::*;
use serde_json::Value;

/// A scripted provider that also answers the folded file context, counting how often it is asked.
struct Folding {
    inner: ScriptedProvider,
    sections: Option<Vec<String>>,
    asked: std::sync::atomic::AtomicUsize,
}

impl Folding {
    fn new(inner: ScriptedProvider, sections: Option<Vec<String>>) -> Self {
        Self {
            inner,
            sections,
            asked: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn asked(&self) -> usize {
        self.asked.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl SummaryProvider for Folding {
    fn create_message<'a>(
        &'a self,
        request: &'a SummaryRequest,
        sink: roo_condense::provider::ChunkSink<'a>,
        cancel: &'a CancelToken,
    ) -> roo_condense::provider::BoxFuture<'a, Result<(), ProviderError>> {
        self.inner.create_message(request, sink, cancel)
    }

    fn count_tokens<'a>(
        &'a self,
        content: &'a [Value],
    ) -> roo_condense::provider::BoxFuture<'a, f64> {
        self.inner.count_tokens(content)
    }

    fn folded_file_context(&self) -> roo_condense::provider::BoxFuture<'_, Option<Vec<String>>> {
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(std::future::ready(self.sections.clone()))
    }
}

fn block_texts(r: &SummarizeResponse) -> Vec<String> {
    r.messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn folded_file_context_is_asked_once_a_summary_came_back() {
    let sections = vec!["<system-reminder>\n## File Context: a.ts\n</system-reminder>".to_owned()];
    let mut msgs = conversation(5);
    msgs[0] = u("Start <command name=\"prr\">/prr #1</command>", 1.0);
    let mut o = sum_opts(msgs.clone());
    o.is_automatic_trigger = true;
    o.environment_details = Some("<environment_details>x</environment_details>".into());
    o.folded_file_context = vec!["from the options".into()];

    // after the summary and the Active Workflows block, before the environment details; the
    // provider's sections replace the options'
    let p = Folding::new(summary_provider(), Some(sections.clone()));
    let r = summarize(&o, &p).await;
    assert_eq!(p.asked(), 1);
    let texts = block_texts(&r);
    assert_eq!(texts.len(), 4);
    assert!(texts[0].starts_with("## Conversation Summary"));
    assert!(texts[1].contains("## Active Workflows"));
    assert_eq!(texts[2], sections[0]);
    assert_eq!(texts[3], "<environment_details>x</environment_details>");

    // no answer keeps the options' sections
    let p = Folding::new(summary_provider(), None);
    let r = summarize(&o, &p).await;
    assert_eq!(p.asked(), 1);
    assert_eq!(block_texts(&r)[2], "from the options");

    // not asked when no summary comes back: too few messages, an API failure, an empty summary
    let p = Folding::new(summary_provider(), Some(sections.clone()));
    summarize(&sum_opts(vec![u("Only", 1.0)]), &p).await;
    let mut failing = summary_provider();
    failing.error = Some("boom".into());
    let f = Folding::new(failing, Some(sections.clone()));
    let r = summarize(&sum_opts(msgs.clone()), &f).await;
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseApiFailed));
    let empty = Folding::new(ScriptedProvider::new(vec![]), Some(sections));
    let r = summarize(&sum_opts(msgs), &empty).await;
    assert_eq!(r.error_key, Some(CondenseErrorKey::CondenseFailed));
    assert_eq!((p.asked(), f.asked(), empty.asked()), (0, 0, 0));
}
