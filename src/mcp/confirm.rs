//! Asking the user before a destructive call (`[safety]`, issue 49): under 2025-11-25 an
//! `elicitation/create` request in the middle of the call; under 2026-07-28 an input-required
//! result whose request state is sealed, bound to the caller, its OAuth client and the exact call,
//! expires within minutes and is good for one answer (issue 63, F10).
//! A declined or cancelled question changes nothing and says so; a client that cannot ask gets
//! the call done, unless `confirm = "required"`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
    RequestStateCodec, SealOptions,
};
use rmcp::service::{ElicitationError, RequestContext};
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::QuireServer;
use super::error::ToolError;
use super::tools::confirm::question;
use crate::acl::Principal;
use crate::ops::ConfirmMode;

/// The form the user answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}
rmcp::elicit_safe!(Confirm);

/// How long a 2025-11-25 question waits for its answer in the middle of the call.
const ANSWER_WITHIN: Duration = Duration::from_secs(600);

/// How long a 2026-07-28 request state holds: long enough for a person to read the question and
/// answer, short enough that a state copied from a log or another client is stale by then.
const STATE_HOLDS: Duration = Duration::from_secs(180);

/// The key of the input request in an input-required result.
const KEY: &str = "confirm";

/// Whether a call goes ahead.
pub(super) enum Gate {
    Go,
    /// Answer this instead of running the call.
    Stop(CallToolResponse),
}

/// Seals the request states of questions; one key per process, so a restart voids open ones.
pub struct Confirmations {
    /// `None` only if the codec refused a random 32-byte key (it refuses shorter ones): then a
    /// 2026-07-28 client is treated as one that cannot be asked.
    codec: Option<RequestStateCodec>,
    /// The nonces of request states already answered, until they would have expired anyway: a
    /// state is good for one answer.
    answered: Mutex<HashMap<Vec<u8>, Instant>>,
}

impl Default for Confirmations {
    fn default() -> Confirmations {
        let key: [u8; 32] = rand::random();
        Confirmations {
            codec: RequestStateCodec::try_new(key.to_vec()).ok(),
            answered: Mutex::new(HashMap::new()),
        }
    }
}

impl Confirmations {
    /// Takes the nonce of a state being answered; false when it was answered before.
    fn first_answer(&self, nonce: Vec<u8>) -> bool {
        let now = Instant::now();
        let mut answered = self.answered.lock().unwrap_or_else(|p| p.into_inner());
        answered.retain(|_, until| *until > now);
        answered.insert(nonce, now + STATE_HOLDS).is_none()
    }
}

impl QuireServer {
    /// Decides whether `request` runs now, asking the user first when it must.
    pub(super) async fn gate(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        principal: &Principal,
    ) -> Result<Gate, ErrorData> {
        let safety = self.shared.features.safety;
        if safety.confirm == ConfirmMode::Off {
            return Ok(Gate::Go);
        }
        let Some(args) = &request.arguments else {
            return Ok(Gate::Go);
        };
        let tool = request.name.as_ref();
        let Some(asked) =
            question(&self.shared.ops, principal, tool, args, safety.confirm_over).await
        else {
            return Ok(Gate::Go);
        };
        let stateless = context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize());
        let can_ask = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.elicitation.is_some());
        let confirmations = &self.shared.confirmations;
        if let (true, Some(codec)) = (stateless, &confirmations.codec) {
            if let Some(state) = &request.request_state {
                return Ok(answered(confirmations, codec, request, principal, state));
            }
            if can_ask {
                return Ok(Gate::Stop(
                    input_required(codec, request, principal, &asked).into(),
                ));
            }
        } else if can_ask && !stateless {
            return Ok(ask_now(context, &asked).await);
        }
        if safety.confirm == ConfirmMode::Required {
            return Ok(stop(ToolError::new(
                "confirmation_required",
                format!(
                    "this call needs the user's confirmation ({asked}), and this client cannot ask them; nothing was changed. Show the user what it will do (run it with dry_run: true, or describe it), and have them run it themselves or from a client that supports elicitation."
                ),
            )));
        }
        Ok(Gate::Go)
    }
}

/// The 2026-07-28 question: an elicitation request and the sealed state of this exact call.
fn input_required(
    codec: &RequestStateCodec,
    request: &CallToolRequestParams,
    principal: &Principal,
    asked: &str,
) -> InputRequiredResult {
    let nonce: [u8; 16] = rand::random();
    let state = codec.seal_with(
        &nonce,
        &SealOptions::new()
            .associated_data(&binding(request, principal))
            .ttl(STATE_HOLDS),
    );
    let form = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: asked.to_owned(),
        requested_schema: schema(),
    };
    let mut requests = InputRequests::new();
    requests.insert(
        KEY.into(),
        InputRequest::Elicitation(ElicitRequest::new(form)),
    );
    InputRequiredResult::new(Some(requests), Some(state))
}

/// The retry of a 2026-07-28 call with the user's answer.
fn answered(
    confirmations: &Confirmations,
    codec: &RequestStateCodec,
    request: &CallToolRequestParams,
    principal: &Principal,
    state: &str,
) -> Gate {
    let opened = codec.open_with(state, &binding(request, principal));
    if !opened.is_ok_and(|nonce| confirmations.first_answer(nonce)) {
        return stop(ToolError::invalid_argument(
            "the confirmation of this call expired, was used already, or belongs to another call (another caller, client, tool or arguments); nothing was changed. Call the tool again to be asked again.",
        ));
    }
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(KEY))
        .and_then(|value| serde_json::from_value::<ElicitResult>(value.clone()).ok());
    match answer {
        Some(result) if accepted(&result) => Gate::Go,
        _ => declined(),
    }
}

/// The 2025-11-25 question, asked in the middle of the call.
async fn ask_now(context: &RequestContext<RoleServer>, asked: &str) -> Gate {
    match context
        .peer
        .elicit_with_timeout::<Confirm>(asked.to_owned(), Some(ANSWER_WITHIN))
        .await
    {
        Ok(Some(Confirm { confirm: true })) => Gate::Go,
        Ok(_) | Err(ElicitationError::UserDeclined) | Err(ElicitationError::UserCancelled) => {
            declined()
        }
        Err(error) => stop(ToolError::new(
            "confirmation_failed",
            format!(
                "the user could not be asked to confirm this call ({error}); nothing was changed. Retry, or run it with dry_run: true and show the user the plan."
            ),
        )),
    }
}

fn accepted(result: &ElicitResult) -> bool {
    result.action == ElicitationAction::Accept
        && result
            .content
            .as_ref()
            .and_then(|content| content.get("confirm"))
            .and_then(serde_json::Value::as_bool)
            == Some(true)
}

fn declined() -> Gate {
    stop(ToolError::new(
        "declined",
        "the user declined this call; nothing was changed. Ask them what to do instead.",
    ))
}

fn stop(error: ToolError) -> Gate {
    Gate::Stop(error.client_result().into())
}

/// What a sealed state is bound to: the caller, its OAuth client, the tool and its exact
/// arguments.
fn binding(request: &CallToolRequestParams, principal: &Principal) -> Vec<u8> {
    let arguments = request
        .arguments
        .as_ref()
        .map(|args| serde_json::Value::Object(args.clone()).to_string())
        .unwrap_or_default();
    format!(
        "{}\n{}\n{}\n{arguments}",
        principal.name(),
        principal.client_id().unwrap_or(""),
        request.name
    )
    .into_bytes()
}

fn schema() -> ElicitationSchema {
    ElicitationSchema::from_type::<Confirm>()
        .unwrap_or_else(|_| ElicitationSchema::builder().build_unchecked())
}
