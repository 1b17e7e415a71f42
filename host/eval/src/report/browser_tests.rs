//! The HTML report in a real browser: headless Chromium parses the page (`--dump-dom`) and
//! screenshots it. The browser's element tree must be exactly the one the page was written with
//! (a stray `<` or an unclosed element makes the parser add or re-nest elements), and the
//! screenshot must not be blank.
//!
//! This test needs Chromium (Debian: `apt-get install -y chromium`, about a minute and 155 MB);
//! `EKB_CHROMIUM` names the binary when it is not `chromium`, `chromium-browser` or
//! `google-chrome` on the PATH. Without one the test fails, saying so: it is never skipped.

use super::{render, Format};
use crate::metrics::compare;
use crate::metrics::fixture::sample_run;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("EKB_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for dir in std::env::split_paths(&path) {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "no Chromium found for the HTML report check: install it (Debian: `apt-get install -y chromium`) \
or set EKB_CHROMIUM to the browser binary"
    )
}

/// Runs the browser headless on `page` with `args`; returns its standard output (through a
/// file, so a large page cannot fill a pipe while we wait).
fn headless(page: &Path, args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let stdout = profile.path().join("stdout");
    let mut child = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("the browser starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            child.kill().unwrap();
            panic!("the browser took more than 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the browser failed: {status}");
    std::fs::read_to_string(&stdout).unwrap()
}

/// The element tree as a sequence of opening names and `/name` closings (`<x/>` gives both; a
/// void `<meta>` only its opening); the style sheet's text is skipped.
fn tags(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        let end = rest[i..].find('>').map_or(rest.len(), |e| e + i);
        let tag = &rest[i + 1..end];
        rest = &rest[(end + 1).min(rest.len())..];
        let closing = tag.starts_with('/');
        let name: String =
            tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if name.is_empty() {
            continue;
        }
        if closing {
            out.push(format!("/{name}"));
            continue;
        }
        out.push(name.clone());
        if tag.ends_with('/') {
            out.push(format!("/{name}"));
        }
        if name == "style" {
            rest = rest.find("</style>").map_or("", |j| &rest[j..]);
        }
    }
    out
}

#[test]
fn chromium_parses_every_element_and_draws_the_page() {
    let mut other = sample_run();
    other.dir = "runs/other".into();
    other.info.candidates = "cands/model-b".into();
    other.results.retain(|r| r.sample == 1);
    let html = render(&compare(&[sample_run(), other], None).unwrap(), Format::Html);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();

    let dom = headless(&page, &["--dump-dom"]);
    let (written, parsed) = (tags(&html), tags(&dom));
    if let Some(i) = (0..written.len().max(parsed.len())).find(|&i| written.get(i) != parsed.get(i)) {
        let around = |t: &[String]| t[i.saturating_sub(4)..(i + 4).min(t.len())].join(" ");
        panic!(
            "the browser parsed another tree: written … {} …, parsed … {} …",
            around(&written),
            around(&parsed)
        );
    }
    assert_eq!(parsed.iter().filter(|t| *t == "svg").count(), 5);
    assert!(
        dom.contains("<tr class=\"flag\">") && dom.contains("12.00x") && dom.contains("speedup vs naive")
    );

    let shot = dir.path().join("report.png");
    headless(&page, &[&format!("--screenshot={}", shot.display()), "--window-size=1200,2000"]);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // A blank 1200 × 2000 page compresses to about 11 KB; this one, with plots and tables in
    // view, to about 200 KB.
    assert!(png.len() > 60_000, "the screenshot looks blank ({} bytes)", png.len());
}
