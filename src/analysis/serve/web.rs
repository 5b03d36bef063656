//! The board page (`web/`, guide `docs/web.md`): `GET /` and
//! `GET /assets/NAME`, from the files of `web/dist/` compiled into the
//! binary, so the binary alone is the whole install. The page holds no
//! data and needs no key; it talks to the server only through
//! `GET /v1/ws`, which does.
//!
//! Text assets go gzipped to clients that accept it (compressed once, on
//! first use). Every answer carries a strong `ETag` (a hash of the bytes)
//! and `Cache-Control: no-cache`, so a browser revalidates with a cheap
//! 304 and never runs a page older than the binary.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::http::ApiError;

/// One file of `web/dist/`.
struct Asset {
    /// Its name under `/assets/` (`index.html` is `/`).
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
    /// Worth gzipping (text); images are compressed already.
    compress: bool,
}

const ASSETS: &[Asset] = &[
    Asset {
        name: "index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../../../web/dist/index.html"),
        compress: true,
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../web/dist/assets/app.js"),
        compress: true,
    },
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../../web/dist/assets/app.css"),
        compress: true,
    },
    Asset {
        name: "board.png",
        content_type: "image/png",
        bytes: include_bytes!("../../../web/dist/assets/board.png"),
        compress: false,
    },
];

/// What is computed once per asset: its ETag and gzipped bytes.
struct Prepared {
    etag: HeaderValue,
    gzip: Option<Vec<u8>>,
}

fn prepared(index: usize) -> &'static Prepared {
    static PREPARED: OnceLock<Vec<Prepared>> = OnceLock::new();
    &PREPARED.get_or_init(|| ASSETS.iter().map(prepare).collect())[index]
}

fn prepare(asset: &Asset) -> Prepared {
    use sha2::{Digest, Sha256};
    let hash: String = Sha256::digest(asset.bytes)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let etag = HeaderValue::from_str(&format!("\"{hash}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
    let gzip = asset.compress.then(|| gzip(asset.bytes)).flatten();
    Prepared { etag, gzip }
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

/// `GET /`: the page.
pub(super) async fn index(headers: HeaderMap) -> Response {
    serve(0, &headers)
}

/// `GET /assets/{name}`: the page's script, styles and images.
pub(super) async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS
        .iter()
        .position(|a| a.name == name && a.name != "index.html")
    {
        Some(i) => serve(i, &headers),
        None => ApiError::new(StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

fn serve(index: usize, headers: &HeaderMap) -> Response {
    let asset = &ASSETS[index];
    let prepared = prepared(index);
    let cached = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|tag| tag.trim().as_bytes() == prepared.etag.as_bytes())
        });
    let common = [
        (header::ETAG, prepared.etag.clone()),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (header::VARY, HeaderValue::from_static("accept-encoding")),
    ];
    if cached {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    let content_type = [(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    )];
    match &prepared.gzip {
        Some(gz) if accepts_gzip(headers) => (
            common,
            content_type,
            [(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"))],
            gz.clone(),
        )
            .into_response(),
        _ => (common, content_type, asset.bytes).into_response(),
    }
}

/// Whether `Accept-Encoding` names gzip (without `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| {
            let mut fields = part.split(';').map(str::trim);
            let coding = fields.next().unwrap_or("");
            let refused = fields.any(|f| f.replace(' ', "") == "q=0");
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_only_when_accepted() {
        let mut h = HeaderMap::new();
        assert!(!accepts_gzip(&h));
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("gzip, deflate, br"),
        );
        assert!(accepts_gzip(&h));
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("br, gzip;q=0"),
        );
        assert!(!accepts_gzip(&h));
    }

    #[test]
    fn every_asset_is_there_and_the_page_names_them() {
        let page = std::str::from_utf8(ASSETS[0].bytes).unwrap();
        for asset in &ASSETS[1..] {
            assert!(!asset.bytes.is_empty(), "{}", asset.name);
            if asset.name.ends_with(".js") || asset.name.ends_with(".css") {
                assert!(
                    page.contains(&format!("/assets/{}", asset.name)),
                    "{}",
                    asset.name
                );
            }
        }
    }
}
