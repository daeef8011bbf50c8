//! A [`Contract`]'s accessors and how it validates requests: the
//! envelope, the bare input of a batch record, and the context (channel,
//! component, time) of either.

use ir::quote::quote;
use ir::{ChannelId, ComponentId};

use crate::input::request::{Envelope, Input, InvalidInput};
use crate::interp::Interpreter;
use crate::native::{NativeProgram, Runner};
use crate::program::Program;
use crate::program::context::Context;
use crate::semantics::budget::Limit;

use super::{Contract, EvaluateError, Request};

impl Contract {
    pub fn name(&self) -> &str {
        &self.program.contract.name
    }

    pub fn version(&self) -> &str {
        &self.program.contract.version
    }

    /// This loaded contract's identity (records and requests laid out
    /// for it carry it).
    pub(crate) fn id(&self) -> u64 {
        self.program.id
    }

    /// The contract as the interpreter runs it.
    pub fn interpreter(&self) -> Interpreter<'_> {
        Interpreter { program: &self.program, code: &self.code, hosts: &self.hosts }
    }

    /// The contract as its native code `native` runs it.
    pub(super) fn runner<'c>(&'c self, native: &'c NativeProgram) -> Runner<'c> {
        Runner { program: &self.program, native, hosts: &self.hosts }
    }

    /// The bundle's content hash.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    pub fn ir(&self) -> &ir::Contract {
        &self.program.contract
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Validates a request's JSON text (LANGUAGE.md's request shape).
    pub fn request<'r>(&self, text: &'r str) -> Result<Request<'r>, InvalidInput> {
        let envelope = Envelope::parse(text)?;
        self.request_from(&envelope)
    }

    /// Validates a request whose envelope is already parsed (for routing
    /// among several contracts).
    pub fn request_from<'r>(&self, envelope: &Envelope<'r>) -> Result<Request<'r>, InvalidInput> {
        if let Some(name) = &envelope.contract
            && name != self.name()
        {
            return Err(InvalidInput::one(
                "contract",
                format!("the request is for {}, not `{}`", quote(name), self.name()),
            ));
        }
        let context = self.context(
            envelope.channel.as_deref(),
            envelope.component.as_deref(),
            envelope.now.as_deref(),
        )?;
        let Some(input) = envelope.input else {
            return Err(InvalidInput::one("input", "missing"));
        };
        let input = Input::parse(&self.program, input.get())?;
        Ok(Request { contract_id: self.id(), context, input })
    }

    /// Validates a bare input record (batch evaluation) on `channel`.
    pub fn request_from_input<'r>(
        &self,
        input: &'r str,
        channel: Option<&str>,
    ) -> Result<Request<'r>, InvalidInput> {
        let context = self.context(channel, None, None)?;
        let input = Input::parse(&self.program, input)?;
        Ok(Request { contract_id: self.id(), context, input })
    }

    /// Resolves a request's channel, component and time.
    pub fn context(
        &self,
        channel: Option<&str>,
        component: Option<&str>,
        now: Option<&str>,
    ) -> Result<Context, InvalidInput> {
        let c = &self.program.contract;
        let mut details = Vec::new();
        let mut problem = |path: &str, message: String| {
            details.push(crate::input::request::Detail { path: path.into(), message })
        };
        let channel = match (channel, c.channels.is_empty()) {
            (None, true) => None,
            (None, false) => {
                problem(
                    "channel",
                    format!("missing: the contract declares channels ({})", c.channels.join(", ")),
                );
                None
            }
            (Some(name), _) => {
                let found = c.channel_by_name(name);
                if found.is_none() {
                    let known =
                        if c.channels.is_empty() { "none".to_string() } else { c.channels.join(", ") };
                    problem("channel", format!("unknown channel {} (declared: {known})", quote(name)));
                }
                found
            }
        };
        let component = match component {
            None => None,
            Some(name) => {
                let found = c.component_by_name(name);
                if found.is_none() {
                    let known =
                        if c.components.is_empty() { "none".to_string() } else { c.components.join(", ") };
                    problem("component", format!("unknown component {} (declared: {known})", quote(name)));
                }
                found
            }
        };
        let now = match now.map(ir::time::parse_timestamp) {
            None => None,
            Some(Ok(nanos)) => Some(nanos),
            Some(Err(message)) => {
                problem("now", message);
                None
            }
        };
        if !details.is_empty() {
            return Err(InvalidInput { details });
        }
        Ok(Context { channel, component, now, limit: self.timeout.map(Limit::After) })
    }

    pub(super) fn check_request(&self, request: &Request<'_>) -> Result<(), EvaluateError> {
        if request.contract_id == self.id() {
            Ok(())
        } else {
            Err(EvaluateError::WrongContract { expected: self.name().to_string() })
        }
    }

    /// The channel called `name`, if declared.
    pub fn channel(&self, name: &str) -> Option<ChannelId> {
        self.program.contract.channel_by_name(name)
    }

    /// The component called `name`, if declared.
    pub fn component(&self, name: &str) -> Option<ComponentId> {
        self.program.contract.component_by_name(name)
    }
}
