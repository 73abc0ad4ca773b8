//! One write per quick answer on an event stream.
//!
//! rmcp answers each session call (2025-11-25) on an event stream that it opens at once with a
//! priming event, an event id a client can resume from after a dropped connection, before the
//! tool has run. Sent on its own, that event costs a second write and a second packet per call;
//! measured on the loopback, that was most of the extra server CPU per call of a session over a
//! stateless request. This layer holds the priming event until the call's first message: an
//! answer that ends the stream goes out whole, with its length, in one write; a notification
//! (progress, a log line) goes out at once with what was held, and the stream carries on live.
//! Nothing is held longer than [`HOLD`], so the long calls that resuming is for keep their
//! resume point. Stateless requests (2026-07-28) already go out in one write and are left alone.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt, stream};
use http_body_util::BodyExt;

/// The header naming a 2025-11-25 session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How long a resume point is held at most. Longer than a loaded server's usual answer (a
/// search at 32 connections: tens of milliseconds), far shorter than any idle timeout that could
/// drop the connection before the priming event arrives.
pub const HOLD: Duration = Duration::from_secs(1);

/// The middleware: only event streams answering a POST within a session are held. A stateless
/// request (2026-07-28) is answered in one write already, and its `subscriptions/listen` stream
/// stays open by design, so its acknowledgement must not wait.
pub async fn whole_quick_answers(request: Request, next: Next) -> Response {
    let is_post =
        request.method() == Method::POST && request.headers().contains_key(SESSION_HEADER);
    let response = next.run(request).await;
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !is_post || !is_stream {
        return response;
    }
    let (mut parts, mut body) = response.into_parts();
    let mut held = BytesMut::new();
    let until = tokio::time::Instant::now() + HOLD;
    loop {
        match tokio::time::timeout_at(until, body.frame()).await {
            Ok(None) => {
                parts.headers.remove(header::TRANSFER_ENCODING);
                return Response::from_parts(parts, Body::from(held.freeze()));
            }
            Ok(Some(Ok(frame))) => {
                // An event stream carries data frames only; a trailer has nothing to hold.
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                held.extend_from_slice(&data);
                if carries_a_notice(&data) {
                    let rest = body.into_data_stream();
                    return Response::from_parts(parts, streamed(held.freeze(), rest));
                }
                // Otherwise a resume point or the answer, and the stream's end follows an answer.
            }
            Ok(Some(Err(error))) => {
                let rest = stream::once(async { Err(error) });
                return Response::from_parts(parts, streamed(held.freeze(), rest));
            }
            Err(_) => {
                let rest = body.into_data_stream();
                return Response::from_parts(parts, streamed(held.freeze(), rest));
            }
        }
    }
}

/// Whether `events` hold a message that is not an answer: a notification or a request of the
/// server's (anything with a `method`), which the client should see as soon as it is sent.
fn carries_a_notice(events: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<serde::de::IgnoredAny>,
    }
    let Ok(text) = std::str::from_utf8(events) else {
        return true;
    };
    // One event per message; the server writes its JSON on one `data:` line.
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .any(|data| {
            serde_json::from_str::<Message>(data).map_or(true, |message| message.method.is_some())
        })
}

/// What was held, then the rest of the stream as it comes.
fn streamed<S>(held: Bytes, rest: S) -> Body
where
    S: Stream<Item = Result<Bytes, axum::Error>> + Send + 'static,
{
    Body::from_stream(stream::once(async { Ok(held) }).chain(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::post;
    use tokio::sync::mpsc;
    use tower::ServiceExt;

    const PRIMING: &str = "id: 0\nretry: 3000\ndata:\n\n";

    /// A route answering with an event stream fed from `events`.
    fn app(events: mpsc::Receiver<&'static str>) -> Router {
        let events = std::sync::Arc::new(std::sync::Mutex::new(Some(events)));
        let stream = move || {
            let events = events.lock().ok().and_then(|mut slot| slot.take());
            async move {
                let stream = futures_util::stream::unfold(events, |events| async move {
                    let mut events = events?;
                    let event = events.recv().await?;
                    Some((Ok::<_, std::io::Error>(Bytes::from(event)), Some(events)))
                });
                Response::builder()
                    .header(header::CONTENT_TYPE, "text/event-stream")
                    .body(Body::from_stream(stream))
                    .unwrap_or_default()
            }
        };
        Router::new()
            .route("/", post(stream.clone()).get(stream))
            .layer(axum::middleware::from_fn(whole_quick_answers))
    }

    fn request(method: Method) -> Request {
        Request::builder()
            .method(method)
            .uri("/")
            .header(SESSION_HEADER, "a-session")
            .body(Body::empty())
            .unwrap_or_default()
    }

    #[tokio::test(start_paused = true)]
    async fn a_quick_answer_goes_out_whole_with_its_length() {
        let (send, events) = mpsc::channel(4);
        let app = app(events);
        tokio::spawn(async move {
            let _ = send.send(PRIMING).await;
            tokio::time::sleep(Duration::from_millis(30)).await;
            let _ = send.send("data: {\"result\":{}}\n\n").await;
        });
        let response = app.oneshot(request(Method::POST)).await.expect("answer");
        let whole = format!("{PRIMING}data: {{\"result\":{{}}}}\n\n");
        assert_eq!(
            response.headers().get(header::CONTENT_LENGTH),
            Some(&whole.len().into())
        );
        let body = response.into_body().collect().await.expect("body");
        assert_eq!(body.to_bytes(), whole.as_bytes());
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_sends_its_resume_point_at_the_hold_and_streams_on() {
        let (send, events) = mpsc::channel(4);
        let app = app(events);
        let started = tokio::time::Instant::now();
        let _ = send.send(PRIMING).await;
        let response = app.oneshot(request(Method::POST)).await.expect("answer");
        assert_eq!(
            started.elapsed(),
            HOLD,
            "held exactly until the hold ran out"
        );
        assert_eq!(response.headers().get(header::CONTENT_LENGTH), None);
        let mut body = response.into_body();
        let first = body.frame().await.expect("a frame").expect("data");
        assert_eq!(first.into_data().ok(), Some(Bytes::from(PRIMING)));
        let _ = send.send("data: {\"result\":{}}\n\n").await;
        drop(send);
        let rest = body.collect().await.expect("the rest").to_bytes();
        assert_eq!(rest, "data: {\"result\":{}}\n\n".as_bytes());
    }

    #[tokio::test(start_paused = true)]
    async fn a_notification_goes_out_at_once_and_the_stream_stays_live() {
        // Progress must reach the client while the call runs: it may cancel on seeing it.
        let (send, events) = mpsc::channel(4);
        let app = app(events);
        let progress =
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n";
        let _ = send.send(PRIMING).await;
        let _ = send.send(progress).await;
        let started = tokio::time::Instant::now();
        let response = app.oneshot(request(Method::POST)).await.expect("answer");
        assert_eq!(started.elapsed(), Duration::ZERO);
        let mut body = response.into_body();
        let first = body.frame().await.expect("a frame").expect("data");
        let first = first.into_data().ok();
        assert_eq!(first, Some(Bytes::from(format!("{PRIMING}{progress}"))));
        let _ = send.send("data: {\"result\":{}}\n\n").await;
        let next = body.frame().await.expect("a frame").expect("data");
        assert_eq!(
            next.into_data().ok(),
            Some(Bytes::from("data: {\"result\":{}}\n\n"))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn streams_that_stay_open_are_never_held() {
        // GET opens a session's stream of server-initiated messages, and a stateless POST may be a
        // `subscriptions/listen` stream: neither has an end to wait for.
        let mut stateless = request(Method::POST);
        stateless.headers_mut().remove(SESSION_HEADER);
        for request in [request(Method::GET), stateless] {
            let (send, events) = mpsc::channel(4);
            let app = app(events);
            let started = tokio::time::Instant::now();
            let response = app.oneshot(request).await.expect("answer");
            assert_eq!(started.elapsed(), Duration::ZERO);
            let _ = send.send(PRIMING).await;
            let mut body = response.into_body();
            let first = body.frame().await.expect("a frame").expect("data");
            assert_eq!(first.into_data().ok(), Some(Bytes::from(PRIMING)));
        }
    }
}
