//! The wire types of OpenAI's completions API (the subset this server implements) and the
//! JSON errors it answers with.
//!
//! Requests are parsed strictly (`deny_unknown_fields`): a misspelt `max_token` is an error
//! naming the field rather than a silently ignored option, as OpenAI's own API does.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// `POST /v1/completions`'s body.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionRequest {
    /// The model to run; absent means the one this server serves. Another name is a 404.
    #[serde(default)]
    pub model: Option<String>,
    /// The text to continue: a string, a one-string array, or an array of token ids.
    pub prompt: Prompt,
    /// Tokens to generate at most (default 16, as OpenAI's). Signed so that a negative value
    /// is a range error naming the field rather than a type error.
    #[serde(default)]
    pub max_tokens: Option<i64>,
    /// Sampling temperature in `[0, 2]`; 0 is greedy. Default 1.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling's mass in `(0, 1]`; 1 is off. Default 1.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Up to four strings that end the completion; they are not included in the text.
    #[serde(default)]
    pub stop: Option<Stop>,
    /// Stream the completion as server-sent events, ending with `data: [DONE]`.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Seed of the sampler (default: a fixed seed, so a request is reproducible).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Completions per prompt: only 1 is served.
    #[serde(default)]
    pub n: Option<i64>,
    /// The caller's end-user id: accepted and ignored, as a log key would be.
    #[serde(default)]
    pub user: Option<String>,
}

/// A prompt as OpenAI's API accepts it (a batch of prompts is refused).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Prompt {
    /// Text, tokenized by the model's tokenizer.
    Text(String),
    /// Token ids, used as they are.
    Tokens(Vec<u32>),
    /// A batch of texts; only a batch of one is served.
    Texts(Vec<String>),
}

/// `stop`: one string or a list.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Stop {
    /// One stop string.
    One(String),
    /// Several (at most four).
    Many(Vec<String>),
}

impl Stop {
    /// The strings, in a list.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            Stop::One(s) => vec![s],
            Stop::Many(v) => v,
        }
    }
}

/// Why a completion ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishReason {
    /// A stop string or the end-of-sequence token.
    Stop,
    /// `max_tokens` or the slot's capacity.
    Length,
}

/// Token counts of a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt.
    pub prompt_tokens: usize,
    /// Tokens generated (a stop string's tokens included, the end-of-sequence token too).
    pub completion_tokens: usize,
    /// Their sum.
    pub total_tokens: usize,
}

/// One choice of a completion (this server always returns one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The generated text (in a stream chunk: the text since the previous chunk).
    pub text: String,
    /// Always 0.
    pub index: usize,
    /// Always null: log-probabilities are not served.
    pub logprobs: Option<serde_json::Value>,
    /// Set on the last choice of a completion; null in a stream's intermediate chunks.
    pub finish_reason: Option<FinishReason>,
}

/// `POST /v1/completions`'s answer, and each chunk of a stream (`object` says which).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionResponse {
    /// `cmpl-…`, the same in every chunk of one stream.
    pub id: String,
    /// `"text_completion"`.
    pub object: String,
    /// Unix seconds at the request's arrival.
    pub created: u64,
    /// The model's name.
    pub model: String,
    /// One choice.
    pub choices: Vec<Choice>,
    /// Token counts; in a stream, only on the chunk that carries the finish reason.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usage: Option<Usage>,
}

/// An error as OpenAI's API gives it: `{"error": {"message", "type", "param", "code"}}`,
/// with its HTTP status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
    /// A machine-readable kind (`invalid_request_error`, `rate_limit_error`, …).
    pub kind: &'static str,
    /// The request field at fault, if one is.
    pub param: Option<&'static str>,
    /// A machine-readable code (`invalid_json`, `queue_full`, `timeout`, …).
    pub code: &'static str,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    param: Option<&'a str>,
    code: &'a str,
}

impl ApiError {
    /// A 400 about the request (`param` names the field).
    pub fn invalid(
        param: Option<&'static str>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param,
            code,
        }
    }

    /// Any status with a code and a message.
    pub fn new(
        status: StatusCode,
        kind: &'static str,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        ApiError {
            status,
            message: message.into(),
            kind,
            param: None,
            code,
        }
    }

    /// The JSON body, as sent (also as a server-sent event when a stream fails).
    pub fn to_json(&self) -> String {
        let body = ErrorBody {
            error: ErrorDetail {
                message: &self.message,
                kind: self.kind,
                param: self.param,
                code: self.code,
            },
        };
        // Serializing a struct of strings cannot fail; the fallback keeps that a non-panic.
        serde_json::to_string(&body).unwrap_or_else(|_| r#"{"error":{"message":"error","type":"server_error","param":null,"code":"internal"}}"#.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.to_json()).into_response();
        response.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        );
        if self.status == StatusCode::PAYLOAD_TOO_LARGE {
            // The rest of the body is never read, so the connection cannot carry another
            // request: say so, or a keep-alive client writes its next request into a
            // connection the server is closing.
            response.headers_mut().insert(
                axum::http::header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
        }
        response
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

/// Parses a request body, telling malformed JSON (`invalid_json`) from well-formed JSON of
/// the wrong shape (`invalid_request`, with serde's message naming the field and type).
pub fn parse_request(body: &[u8]) -> Result<CompletionRequest, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => ApiError::invalid(
                None,
                "invalid_json",
                format!("the body is not valid JSON: {e}"),
            ),
            Category::Data => ApiError::invalid(
                None,
                "invalid_request",
                format!("the body does not fit the completions request: {e}"),
            ),
        }
    })
}

/// Limits a request is checked against before anything is allocated for it.
#[derive(Debug, Clone, Copy)]
pub struct RequestLimits {
    /// Tokens per slot: prompt plus generated.
    pub capacity: usize,
    /// Token ids must be below this.
    pub vocab_size: usize,
    /// `max_tokens` when the request does not say (capped by what the slot has left).
    pub default_max_tokens: usize,
}

/// A request's options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// 0 is greedy.
    pub temperature: f32,
    /// 1 is off.
    pub top_p: f32,
    /// The sampler's seed.
    pub seed: u64,
    /// Stop strings (non-empty, at most four).
    pub stop: Vec<String>,
    /// Stream as server-sent events.
    pub stream: bool,
}

/// Most stop strings a request may give (OpenAI's limit).
pub const MAX_STOPS: usize = 4;
/// Longest stop string, in bytes: a stop string is matched against held-back text, so its
/// length bounds what a stream delays.
pub const MAX_STOP_BYTES: usize = 256;

/// Checks everything that does not need the prompt's tokens.
pub fn check_options(req: &CompletionRequest, model_name: &str) -> Result<Checked, ApiError> {
    if let Some(model) = &req.model {
        if model != model_name {
            return Err(ApiError {
                status: StatusCode::NOT_FOUND,
                message: format!(
                    "the model `{}` does not exist; this server serves `{model_name}`",
                    truncate(model, 128)
                ),
                kind: "invalid_request_error",
                param: Some("model"),
                code: "model_not_found",
            });
        }
    }
    if let Some(n) = req.n {
        if n != 1 {
            return Err(ApiError::invalid(
                Some("n"),
                "invalid_value",
                format!("n must be 1 (got {n})"),
            ));
        }
    }
    let temperature = req.temperature.unwrap_or(1.0);
    if !(0.0..=2.0).contains(&temperature) {
        return Err(ApiError::invalid(
            Some("temperature"),
            "invalid_value",
            format!("temperature must be in [0, 2] (got {temperature})"),
        ));
    }
    let top_p = req.top_p.unwrap_or(1.0);
    if !(top_p > 0.0 && top_p <= 1.0) {
        return Err(ApiError::invalid(
            Some("top_p"),
            "invalid_value",
            format!("top_p must be in (0, 1] (got {top_p})"),
        ));
    }
    let stop = req.stop.clone().map(Stop::into_vec).unwrap_or_default();
    if stop.len() > MAX_STOPS {
        return Err(ApiError::invalid(
            Some("stop"),
            "invalid_value",
            format!("at most {MAX_STOPS} stop strings (got {})", stop.len()),
        ));
    }
    if let Some(bad) = stop
        .iter()
        .find(|s| s.is_empty() || s.len() > MAX_STOP_BYTES)
    {
        return Err(ApiError::invalid(
            Some("stop"),
            "invalid_value",
            format!(
                "a stop string must have 1 to {MAX_STOP_BYTES} bytes (got {})",
                bad.len()
            ),
        ));
    }
    Ok(Checked {
        temperature: temperature as f32,
        top_p: top_p as f32,
        seed: req.seed.unwrap_or(0),
        stop,
        stream: req.stream.unwrap_or(false),
    })
}

/// Checks the prompt's tokens against the context and the vocabulary, and resolves
/// `max_tokens`: at least one token must fit after the prompt.
pub fn check_lengths(
    prompt: &[u32],
    max_tokens: Option<i64>,
    limits: &RequestLimits,
) -> Result<usize, ApiError> {
    if prompt.is_empty() {
        return Err(ApiError::invalid(
            Some("prompt"),
            "invalid_value",
            "the prompt has no tokens",
        ));
    }
    if let Some(&bad) = prompt.iter().find(|&&t| t as usize >= limits.vocab_size) {
        return Err(ApiError::invalid(
            Some("prompt"),
            "invalid_value",
            format!(
                "token id {bad} is outside the vocabulary (size {})",
                limits.vocab_size
            ),
        ));
    }
    if prompt.len() >= limits.capacity {
        return Err(ApiError::invalid(
            Some("prompt"),
            "context_length_exceeded",
            format!(
                "the prompt has {} tokens; this server's context is {} tokens, and at least one must be left to generate",
                prompt.len(),
                limits.capacity
            ),
        ));
    }
    let room = limits.capacity - prompt.len();
    match max_tokens {
        None => Ok(limits.default_max_tokens.min(room)),
        Some(m) if m < 1 => Err(ApiError::invalid(Some("max_tokens"), "invalid_value", format!("max_tokens must be at least 1 (got {m})"))),
        Some(m) if m as u64 > room as u64 => Err(ApiError::invalid(
            Some("max_tokens"),
            "context_length_exceeded",
            format!(
                "max_tokens is {m}, but the prompt's {} tokens leave room for {room} in this server's context of {} tokens",
                prompt.len(),
                limits.capacity
            ),
        )),
        Some(m) => Ok(m as usize),
    }
}

/// At most `max` bytes of `s`, cut on a character boundary: echoing an attacker's megabyte
/// back in an error would be an amplifier.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: RequestLimits = RequestLimits {
        capacity: 8,
        vocab_size: 100,
        default_max_tokens: 16,
    };

    #[test]
    fn malformed_and_mistyped_bodies_are_told_apart() {
        let e = parse_request(b"{\"prompt\": ").unwrap_err();
        assert_eq!(
            (e.status, e.code),
            (StatusCode::BAD_REQUEST, "invalid_json")
        );
        let e = parse_request(br#"{"prompt": "a", "max_tokens": "ten"}"#).unwrap_err();
        assert_eq!(e.code, "invalid_request");
        assert!(e.message.contains("invalid type"), "{}", e.message);
        let e = parse_request(br#"{"max_tokens": 3}"#).unwrap_err();
        assert!(
            e.message.contains("missing field `prompt`"),
            "{}",
            e.message
        );
        let e = parse_request(br#"{"prompt": "a", "max_token": 3}"#).unwrap_err();
        assert!(
            e.message.contains("unknown field `max_token`"),
            "{}",
            e.message
        );
        let e = parse_request(br#"[1, 2]"#).unwrap_err();
        assert_eq!(e.code, "invalid_request");
        assert!(parse_request(br#"{"prompt": [1, 2], "stop": null, "stream": true}"#).is_ok());
    }

    #[test]
    fn options_are_ranged() {
        let req = |body: &str| parse_request(body.as_bytes()).unwrap();
        assert_eq!(
            check_options(&req(r#"{"prompt":"a","model":"x"}"#), "m")
                .unwrap_err()
                .status,
            StatusCode::NOT_FOUND
        );
        assert!(check_options(&req(r#"{"prompt":"a","model":"m"}"#), "m").is_ok());
        for bad in [
            r#""temperature":-0.1"#,
            r#""temperature":2.5"#,
            r#""top_p":0"#,
            r#""top_p":1.5"#,
            r#""n":2"#,
            r#""stop":"""#,
            r#""stop":["a","b","c","d","e"]"#,
        ] {
            let e = check_options(&req(&format!(r#"{{"prompt":"a",{bad}}}"#)), "m").unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{bad}");
        }
        let c = check_options(&req(r#"{"prompt":"a","stop":"\n","temperature":0}"#), "m").unwrap();
        assert_eq!((c.stop, c.temperature), (vec!["\n".to_string()], 0.0));
    }

    #[test]
    fn lengths_leave_room_for_one_token() {
        assert_eq!(check_lengths(&[1, 2, 3], None, &LIMITS).unwrap(), 5);
        assert_eq!(check_lengths(&[1, 2, 3], Some(5), &LIMITS).unwrap(), 5);
        assert_eq!(
            check_lengths(&[1, 2, 3], Some(6), &LIMITS)
                .unwrap_err()
                .code,
            "context_length_exceeded"
        );
        assert_eq!(
            check_lengths(&[1, 2, 3], Some(0), &LIMITS)
                .unwrap_err()
                .code,
            "invalid_value"
        );
        assert_eq!(
            check_lengths(&[1, 2, 3], Some(i64::MAX), &LIMITS)
                .unwrap_err()
                .code,
            "context_length_exceeded"
        );
        assert_eq!(
            check_lengths(&[1; 8], None, &LIMITS).unwrap_err().code,
            "context_length_exceeded"
        );
        assert_eq!(
            check_lengths(&[100], None, &LIMITS).unwrap_err().param,
            Some("prompt")
        );
        assert_eq!(
            check_lengths(&[], None, &LIMITS).unwrap_err().param,
            Some("prompt")
        );
    }

    #[test]
    fn errors_are_openai_shaped() {
        let e = ApiError::invalid(Some("top_p"), "invalid_value", "no");
        let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(v["error"]["param"], "top_p");
        assert_eq!(v["error"]["type"], "invalid_request_error");
        assert_eq!(truncate("héllo", 2), "h");
    }
}
