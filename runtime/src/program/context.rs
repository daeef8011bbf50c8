//! The request-level settings of one evaluation (channel, component, time,
//! limit), and which rules apply under them: one meaning for both engines.

use ir::{ChannelId, ComponentId};

use crate::semantics::budget::Limit;

/// The request-level settings of one evaluation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    pub channel: Option<ChannelId>,
    pub component: Option<ComponentId>,
    /// What `now()` returns; the clock when absent.
    pub now: Option<i64>,
    /// How long the evaluation may run (`crate::semantics::budget`); no limit when
    /// absent. Both engines of one evaluation share one
    /// [`crate::semantics::budget::Budget`].
    pub limit: Option<Limit>,
}

impl Context {
    /// `1 << channel`, or 0 when the request names no channel: what
    /// [`RulePlan::channels`] masks, here and in native code.
    pub fn channel_bit(&self) -> u64 {
        self.channel.map_or(0, |c| 1u64 << c.0)
    }
}

/// A rule as both engines schedule it, prepared once per contract.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RulePlan {
    /// The channels the rule runs on, a bit each (`1 << channel`); `None`
    /// when it runs on every channel, including none.
    pub channels: Option<u64>,
    /// The component the rule belongs to, if any.
    pub component: Option<ComponentId>,
    /// When some expression refers to the rule (`rules.<id>`), its place
    /// among the referenced rules (their order): both engines compute such
    /// a rule at most once, for its turn or for the reference, and the
    /// interpreter keeps memos for those rules only.
    pub memo: Option<u32>,
}

impl RulePlan {
    /// The plan of `rule`; `memo` is its place among the referenced rules
    /// when it is one of them.
    pub fn new(rule: &ir::Rule, memo: Option<u32>) -> RulePlan {
        let channels = rule.channels.as_ref().map(|ids| ids.iter().fold(0u64, |mask, c| mask | 1 << c.0));
        RulePlan { channels, component: rule.component, memo }
    }

    /// Whether some expression refers to the rule.
    pub fn referenced(&self) -> bool {
        self.memo.is_some()
    }

    /// Whether the rule runs for a request of `context`: on one of its
    /// channels (a request without a channel runs only the rules that
    /// name none), and in the request's component when it names one.
    pub fn applies(&self, context: &Context) -> bool {
        let channel_ok = self.channels.is_none_or(|mask| mask & context.channel_bit() != 0);
        channel_ok && context.component.is_none_or(|component| self.component == Some(component))
    }
}
