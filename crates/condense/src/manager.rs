//! The manager half of the split: configuration (global and per-profile thresholds, custom prompt,
//! era), the decision, and the fallback to truncation. Models are reached only through a
//! [`SummaryProvider`].

use crate::condense::{summarize_conversation, Cancelled, SummarizeOptions, SummarizeResponse};
use crate::context::{
    decide_context, effective_threshold, manage_context, will_manage_context, ContextDecision,
    ContextManagementResult, EffectiveThreshold, ManageContextOptions, WillManageContextOptions,
};
use crate::era::Era;
use crate::provider::{CancelToken, SummaryProvider};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Condensing settings as the extension keeps them in its global state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CondenseSettings {
    pub auto_condense_context: bool,
    pub auto_condense_context_percent: f64,
    pub profile_thresholds: Map<String, Value>,
    pub custom_condensing_prompt: Option<String>,
    pub era: Era,
}

impl Default for CondenseSettings {
    fn default() -> Self {
        Self {
            auto_condense_context: true,
            auto_condense_context_percent: 100.0,
            profile_thresholds: Map::new(),
            custom_condensing_prompt: None,
            era: Era::HEAD,
        }
    }
}

/// The state of one task's request that the decision needs.
#[derive(Debug, Clone, Default)]
pub struct ContextInput {
    pub messages: Vec<Value>,
    pub total_tokens: f64,
    pub context_window: f64,
    pub max_tokens: Option<f64>,
    pub system_prompt: String,
    pub task_id: String,
    pub profile_id: String,
    pub metadata: Option<Value>,
    pub environment_details: Option<String>,
    pub folded_file_context: Vec<String>,
    /// The provider measures the context against the window less the output reserve (VS Code's
    /// language-model API).
    pub use_available_input_for_context_percent: bool,
}

/// Configuration and decisions; the provider does the model calls.
pub struct CondensationManager {
    pub settings: CondenseSettings,
    provider: Arc<dyn SummaryProvider>,
    condensing_provider: Option<Arc<dyn SummaryProvider>>,
}

impl CondensationManager {
    pub fn new(settings: CondenseSettings, provider: Arc<dyn SummaryProvider>) -> Self {
        Self {
            settings,
            provider,
            condensing_provider: None,
        }
    }

    /// A separate provider for summaries (the "condensing API profile" of releases up to 3.41);
    /// used when it is valid, else the main one.
    pub fn with_condensing_provider(mut self, provider: Arc<dyn SummaryProvider>) -> Self {
        self.condensing_provider = Some(provider);
        self
    }

    /// The provider that writes summaries.
    pub fn summarizer(&self) -> &dyn SummaryProvider {
        match &self.condensing_provider {
            Some(p) if p.is_valid() => p.as_ref(),
            _ => self.provider.as_ref(),
        }
    }

    pub fn set_profile_threshold(&mut self, profile_id: &str, threshold: f64) {
        self.settings
            .profile_thresholds
            .insert(profile_id.to_owned(), crate::js::num_value(threshold));
    }

    pub fn effective_threshold(&self, profile_id: &str) -> EffectiveThreshold {
        effective_threshold(
            self.settings.auto_condense_context_percent,
            &self.settings.profile_thresholds,
            profile_id,
        )
    }

    fn options(&self, input: &ContextInput) -> ManageContextOptions {
        ManageContextOptions {
            messages: input.messages.clone(),
            total_tokens: input.total_tokens,
            context_window: input.context_window,
            max_tokens: input.max_tokens,
            auto_condense_context: self.settings.auto_condense_context,
            auto_condense_context_percent: self.settings.auto_condense_context_percent,
            profile_thresholds: self.settings.profile_thresholds.clone(),
            current_profile_id: input.profile_id.clone(),
            system_prompt: input.system_prompt.clone(),
            task_id: input.task_id.clone(),
            custom_condensing_prompt: self.settings.custom_condensing_prompt.clone(),
            metadata: input.metadata.clone(),
            environment_details: input.environment_details.clone(),
            folded_file_context: input.folded_file_context.clone(),
            summary_prompt: None,
            last_message_tokens: None,
            use_available_input_for_context_percent: input.use_available_input_for_context_percent,
            era: self.settings.era,
        }
    }

    /// Whether the next request would condense or truncate.
    pub fn will_manage_context(&self, input: &ContextInput, last_message_tokens: f64) -> bool {
        will_manage_context(&WillManageContextOptions {
            total_tokens: input.total_tokens,
            context_window: input.context_window,
            max_tokens: input.max_tokens,
            auto_condense_context: self.settings.auto_condense_context,
            auto_condense_context_percent: self.settings.auto_condense_context_percent,
            profile_thresholds: self.settings.profile_thresholds.clone(),
            current_profile_id: input.profile_id.clone(),
            last_message_tokens,
            use_available_input_for_context_percent: input.use_available_input_for_context_percent,
            era: self.settings.era,
        })
    }

    /// What would be done, without calling a model.
    pub fn decide(&self, input: &ContextInput) -> ContextDecision {
        decide_context(&self.options(input))
    }

    /// Carry the decision out: summarise with the summarizer, fall back to truncation on failure.
    pub async fn manage_context(
        &self,
        input: &ContextInput,
        cancel: &CancelToken,
    ) -> Result<ContextManagementResult, Cancelled> {
        manage_context(&self.options(input), self.summarizer(), cancel).await
    }

    /// A manual condense (`isAutomaticTrigger: false`, so no environment details in the summary).
    pub async fn condense(
        &self,
        input: &ContextInput,
        cancel: &CancelToken,
    ) -> Result<SummarizeResponse, Cancelled> {
        let opts = SummarizeOptions {
            messages: input.messages.clone(),
            system_prompt: input.system_prompt.clone(),
            task_id: input.task_id.clone(),
            is_automatic_trigger: false,
            custom_condensing_prompt: self.settings.custom_condensing_prompt.clone(),
            metadata: input.metadata.clone(),
            environment_details: None,
            folded_file_context: input.folded_file_context.clone(),
            prev_context_tokens: Some(input.total_tokens),
            summary_prompt: None,
            era: self.settings.era,
        };
        summarize_conversation(&opts, self.summarizer(), cancel).await
    }
}
