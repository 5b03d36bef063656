//! [`StoreError`]: what failed, on what, and why, in one line.

/// What a store operation was doing, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreOp {
    /// Opening the store.
    Open,
    /// Reading an object.
    Read,
    /// Writing an object.
    Write,
    /// Creating an object that must not exist yet.
    Create,
    /// Listing a prefix.
    List,
    /// Deleting an object.
    Delete,
}

impl std::fmt::Display for StoreOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StoreOp::Open => "opening",
            StoreOp::Read => "reading",
            StoreOp::Write => "writing",
            StoreOp::Create => "creating",
            StoreOp::List => "listing",
            StoreOp::Delete => "deleting",
        })
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// No such object.
    NotFound,
    /// [`Store::put_new`] found the key taken (by different bytes).
    AlreadyExists,
    /// The S3 bucket does not exist.
    MissingBucket,
    /// The server refused the credentials or the access.
    Denied,
    /// The server could not be reached, or kept failing, for the whole
    /// retry window.
    Unreachable,
    /// The URL or the S3 configuration is not usable.
    InvalidUrl,
    /// Anything else (a local I/O error, an unexpected answer).
    Other,
}

/// A failed store operation: what, where, and why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{op} {target}: {}{detail}", kind_text(.kind))]
pub struct StoreError {
    /// The operation.
    pub op: StoreOp,
    /// The object's or the store's full URL.
    pub target: String,
    /// The kind of failure.
    pub kind: StoreErrorKind,
    /// The underlying error's text (with a leading `": "`), or empty.
    pub detail: String,
}

fn kind_text(kind: &StoreErrorKind) -> &'static str {
    match kind {
        StoreErrorKind::NotFound => "not found",
        StoreErrorKind::AlreadyExists => "already exists",
        StoreErrorKind::MissingBucket => "the bucket does not exist",
        StoreErrorKind::Denied => {
            "access denied (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket's policy)"
        }
        StoreErrorKind::Unreachable => {
            "the store is unreachable (check AWS_ENDPOINT and the server; retried with backoff)"
        }
        StoreErrorKind::InvalidUrl => "invalid store URL",
        StoreErrorKind::Other => "failed",
    }
}

impl StoreError {
    pub(super) fn new(
        op: StoreOp,
        target: String,
        kind: StoreErrorKind,
        detail: impl std::fmt::Display,
    ) -> Self {
        let detail = detail.to_string();
        StoreError {
            op,
            target,
            kind,
            detail: if detail.is_empty() {
                detail
            } else {
                format!(": {detail}")
            },
        }
    }

    pub(crate) fn invalid_url(text: &str, why: &str) -> Self {
        StoreError::new(
            StoreOp::Open,
            text.to_string(),
            StoreErrorKind::InvalidUrl,
            why,
        )
    }

    /// Whether the object was not there.
    pub fn is_not_found(&self) -> bool {
        self.kind == StoreErrorKind::NotFound
    }

    pub(super) fn from_object_store(op: StoreOp, target: String, e: object_store::Error) -> Self {
        use object_store::Error as E;
        let text = error_chain(&e);
        let kind = match &e {
            E::NotFound { .. } if text.contains("NoSuchBucket") => StoreErrorKind::MissingBucket,
            E::NotFound { .. } => StoreErrorKind::NotFound,
            E::AlreadyExists { .. } | E::Precondition { .. } => StoreErrorKind::AlreadyExists,
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => StoreErrorKind::Denied,
            _ if text.contains("NoSuchBucket") => StoreErrorKind::MissingBucket,
            _ if text.contains("SignatureDoesNotMatch")
                || text.contains("InvalidAccessKeyId")
                || text.contains("AccessDenied") =>
            {
                StoreErrorKind::Denied
            }
            _ if is_transport_error(&e) || text.contains("after ") && text.contains("retries") => {
                StoreErrorKind::Unreachable
            }
            _ => StoreErrorKind::Other,
        };
        StoreError::new(op, target, kind, text)
    }
}

/// The error and its sources in one line (object_store's top-level text
/// alone often hides the server's answer). An S3 XML error body is cut
/// down to its code and message.
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    shorten_xml_error(&text)
}

/// `...: <?xml ...><Error><Code>C</Code><Message>M</Message>...` as
/// `...: C: M`.
pub(super) fn shorten_xml_error(text: &str) -> String {
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text.replace('\n', " ");
    };
    let tag = |name: &str| -> Option<&str> {
        let open = format!("<{name}>");
        let from = text[start..].find(&open)? + start + open.len();
        let to = text[from..].find(&format!("</{name}>"))? + from;
        Some(&text[from..to])
    };
    let mut short = text[..start].trim_end().to_string();
    for part in [tag("Code"), tag("Message")].into_iter().flatten() {
        short.push(' ');
        short.push_str(part);
    }
    short.replace('\n', " ")
}

/// A connection, request or timeout failure somewhere in the chain.
fn is_transport_error(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<object_store::client::HttpError>() {
            use object_store::client::HttpErrorKind as K;
            return matches!(
                h.kind(),
                K::Connect | K::Request | K::Timeout | K::Interrupted
            );
        }
        source = s.source();
    }
    false
}
