//! The review page in a real browser: Debian's chromium, headless, renders the
//! report of every shipped example; the page logs no console error, every
//! section is in the DOM, every SVG has a size, and a screenshot of each goes
//! to `target/review-NAME.png` for people to look at.
//!
//! Without `/usr/bin/chromium` the test does not run and says so on the
//! terminal; `.ci/run` installs chromium as root and sets
//! `RETRYLINT_REQUIRE_TOOLS=1`, which makes a missing browser a failure.
//!
//! The size of each SVG is read from the DOM chromium dumps: the page has no
//! script to measure layout with, so the test checks what a browser sizes an
//! SVG by — its `width`/`height` attributes (positive numbers) or its
//! `viewBox` — and the screenshot shows the rest.
//!
//! Dark mode: chromium renders one page with each colour scheme
//! (`--blink-settings=preferredColorScheme=0` is dark, `=1` light; with
//! chromium 148, `--force-dark-mode` flips the media query too, the
//! blink setting names both schemes) and screenshots both to
//! `target/review-NAME-dark.png` and `-light.png`. No PNG decoder is in
//! the build, so the colours are read the way the browser computes them: a
//! copy of the page gets a probe script that writes `matchMedia` and the
//! computed colours of the body and the chart text into an attribute of
//! `<html>`, and the test reads them from the dumped DOM.
//!
//! The call graph is measured the same way, in both schemes: a probe asks
//! the browser for the box of every text in every graph (`getBBox`, with
//! the fonts it really drew) and writes into `<html data-graph=…>` every
//! label or service text that leaves the picture or its background box,
//! and every two label or service boxes that overlap.

use crate::common::html;

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const EXAMPLES: &[&str] = &[
    "aws-five-layers",
    "clean",
    "ecommerce",
    "seed-002-deadline",
    "sidecar",
    "sre-book",
    "surge",
    "surge-budget",
];
/// Topologies the tests use whose graphs were drawn wrong before: a sidecar
/// label wider than its one column (cut at the picture's edge), and figures
/// of twenty digits wider than their boxes.
const GRAPH_CASES: &[(&str, &str)] = &[
    ("wide-label", "tests/fixtures/rules/RL021_ok.yaml"),
    ("huge-figures", "tests/fixtures/rules/RL015_fires.yaml"),
];
/// A cold chromium start on a loaded 2-core machine takes a few seconds.
const BOUND: Duration = Duration::from_secs(90);

fn browser() -> Option<&'static str> {
    if Path::new(CHROMIUM).exists() {
        return Some(CHROMIUM);
    }
    common::absent::tool_missing(
        "the review page in a real browser",
        CHROMIUM,
        "as root: apt-get install -y chromium; .ci/run does this",
    );
    None
}

fn target_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is target/tmp; screenshots go beside it.
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map_or(tmp.clone(), Path::to_path_buf)
}

/// Runs chromium headless with `args` on `url`, isolated in a fresh profile
/// and with everything that phones home off, within [`BOUND`].
fn chromium(exe: &str, profile: &Path, args: &[String], url: &str) -> (String, String) {
    let mut cmd = Command::new(exe);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .arg(url)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("chromium starts");
    let start = Instant::now();
    // Read both pipes on threads so a full pipe cannot stall chromium.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    loop {
        match child.try_wait().unwrap() {
            Some(_) => break,
            None if start.elapsed() > BOUND => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within {BOUND:?}");
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    (out_t.join().unwrap(), err_t.join().unwrap())
}

/// One chromium start in colour scheme `setting` (0 dark, 1 light) that
/// does both: the screenshot to `png`, and the DOM it returns. Asserts the
/// page logged no console error and the screenshot is not blank; `what`
/// names the page in messages.
fn shoot(exe: &str, profile: &Path, png: &Path, setting: u8, url: &str, what: &str) -> String {
    let _ = std::fs::remove_dir_all(profile);
    let _ = std::fs::remove_file(png);
    let (dom, log) = chromium(
        exe,
        profile,
        &[
            format!("--blink-settings=preferredColorScheme={setting}"),
            format!("--screenshot={}", png.display()),
            "--dump-dom".into(),
            "--window-size=1280,4000".into(),
        ],
        url,
    );
    let errors = console_errors(&log);
    assert!(errors.is_empty(), "{what}: console errors: {errors:?}");
    let size = std::fs::metadata(png)
        .unwrap_or_else(|e| panic!("{what}: no screenshot {}: {e}\n{log}", png.display()))
        .len();
    assert!(size > 10_000, "{what}: a {size}-byte screenshot is blank");
    let _ = std::fs::remove_dir_all(profile);
    dom
}

/// Console messages in chromium's log. Chromium logs every console message
/// at INFO (`INFO:CONSOLE:1] "Uncaught ReferenceError…"`), whatever its
/// level, so any of them counts: the page has no script, and a message can
/// only be the browser complaining about it. Failed loads too.
fn console_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| {
            l.contains(":CONSOLE")
                || l.contains("net::ERR_")
                || l.contains("Failed to load resource")
        })
        .collect()
}

/// `(width, height)` of every `<svg …>` tag in `dom`, from its attributes.
fn svg_sizes(dom: &str) -> Vec<(f64, f64)> {
    let attr = |tag: &str, name: &str| -> Option<f64> {
        let key = format!(" {name}=\"");
        let i = tag.find(&key)? + key.len();
        tag[i..].split('"').next()?.parse().ok()
    };
    dom.match_indices("<svg")
        .map(|(i, _)| {
            let tag = &dom[i..i + dom[i..].find('>').unwrap_or(dom.len() - i)];
            (
                attr(tag, "width").unwrap_or(0.0),
                attr(tag, "height").unwrap_or(0.0),
            )
        })
        .collect()
}

#[test]
fn every_example_renders_in_chromium() {
    let Some(exe) = browser() else { return };
    let target = target_dir();
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&scratch).unwrap();
    let bin = env!("CARGO_BIN_EXE_retrylint");
    // Every example, and one page with a second topology beside the first.
    let mut pages: Vec<(String, Vec<String>)> = EXAMPLES
        .iter()
        .map(|name| (name.to_string(), vec![format!("examples/{name}.yaml")]))
        .collect();
    pages.extend(
        GRAPH_CASES
            .iter()
            .map(|(name, file)| (name.to_string(), vec![file.to_string()])),
    );
    pages.push((
        "compare-sre-book".into(),
        vec![
            "examples/sre-book.yaml".into(),
            "--compare".into(),
            "tests/fixtures/review/sre-book-one-layer.yaml".into(),
        ],
    ));
    for (name, args) in &pages {
        let page = scratch.join(format!("{name}.html"));
        let status = Command::new(bin)
            .arg("report")
            .args(args)
            .arg("-o")
            .arg(&page)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{name}: report failed");
        let html_text = std::fs::read_to_string(&page).unwrap();
        assert!(html::remote_fetches(&html_text).is_empty());
        assert_eq!(html_text.matches("</body>").count(), 1);
        let probed = scratch.join(format!("{name}-probed.html"));
        std::fs::write(
            &probed,
            html_text.replace("</body>", &format!("{GRAPH_PROBE}</body>")),
        )
        .unwrap();
        let url = format!("file://{}", probed.canonicalize().unwrap().display());
        for (scheme, setting) in [("light", 1), ("dark", 0)] {
            let profile = scratch.join(format!("profile-{name}-{scheme}"));
            let png = match scheme {
                "light" => target.join(format!("review-{name}.png")),
                _ => target.join(format!("review-{name}-{scheme}.png")),
            };
            let dom = shoot(exe, &profile, &png, setting, &url, name);
            for id in retrylint::formats::review::html::SECTIONS {
                assert!(
                    dom.contains(&format!("id=\"{id}\"")),
                    "{name}: the browser's DOM has no section {id}"
                );
            }
            let sizes = svg_sizes(&dom);
            // A graph and three charts at least.
            assert!(sizes.len() >= 4, "{name}: {} SVGs", sizes.len());
            for (w, h) in sizes {
                assert!(w > 0.0 && h > 0.0, "{name}: an SVG of {w} × {h}");
            }
            let (measured, faults) = graph_faults(&dom);
            // Every graph has at least two services (a name and a figure each).
            assert!(measured >= 4, "{name}: {measured} graph texts measured");
            assert!(
                faults.is_empty(),
                "{name} ({scheme}): the call graph is drawn wrong:\n{}",
                faults.join("\n")
            );
        }
    }
}

/// Writes into `<html data-graph="N|…">` how many graph texts it measured
/// and, `; `-separated, each text that leaves its graph or its background
/// box and each two label or service boxes that overlap (half a pixel of
/// rounding allowed).
const GRAPH_PROBE: &str = "<script>(function(){var out=[],checked=0;
function over(a,b){return a.x<b.x+b.width-0.5&&b.x<a.x+a.width-0.5&&a.y<b.y+b.height-0.5&&b.y<a.y+a.height-0.5;}
function inside(a,b){return a.x>=b.x-0.5&&a.y>=b.y-0.5&&a.x+a.width<=b.x+b.width+0.5&&a.y+a.height<=b.y+b.height+0.5;}
function fig(b){return [b.x,b.y,b.width,b.height].map(Math.round).join(',');}
document.querySelectorAll('svg.graph').forEach(function(svg,k){var vb=svg.viewBox.baseVal,frame={x:0,y:0,width:vb.width,height:vb.height},boxes=[];
svg.querySelectorAll('text').forEach(function(t){checked++;var b=t.getBBox(),g=t.parentNode,label=g.classList.contains('edge'),name=(label?'label ':'service ')+t.textContent,bg=g.querySelector('rect').getBBox();
if(!inside(b,frame))out.push(name+' at '+fig(b)+' leaves the '+fig(frame)+' graph '+k);
if(!inside(b,bg))out.push(name+' at '+fig(b)+' overflows its box '+fig(bg));
if(label||t.classList.contains('name'))boxes.push({n:name,b:bg});});
for(var i=0;i<boxes.length;i++)for(var j=i+1;j<boxes.length;j++)if(over(boxes[i].b,boxes[j].b))out.push(boxes[i].n+' overlaps '+boxes[j].n+' in graph '+k);});
document.documentElement.setAttribute('data-graph',checked+'|'+out.join('; '));})();</script>";

/// The graph probe's count and faults from a dumped DOM.
fn graph_faults(dom: &str) -> (usize, Vec<String>) {
    let key = "data-graph=\"";
    let i = dom.find(key).expect("the graph probe ran") + key.len();
    let value = dom[i..].split('"').next().unwrap();
    let (count, faults) = value.split_once('|').unwrap();
    let faults = faults
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let faults = faults
        .split("; ")
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    (count.parse().unwrap(), faults)
}

/// Writes what the browser computes into `<html data-probe=…>`: whether the
/// page is in dark mode, the body's background and text colour, and the
/// fill of the first chart text.
const PROBE: &str = "<script>(function(){var b=getComputedStyle(document.body),t=document.querySelector('svg text');document.documentElement.setAttribute('data-probe',[matchMedia('(prefers-color-scheme: dark)').matches,b.backgroundColor,b.color,t?getComputedStyle(t).fill:''].join('|'));})();</script>";

/// `rgb(13, 17, 23)` as its relative luminance, 0 (black) to 1 (white).
fn luminance(css: &str) -> f64 {
    let inner = css
        .trim()
        .strip_prefix("rgb(")
        .or_else(|| css.trim().strip_prefix("rgba("))
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not an rgb() colour: {css}"));
    let c: Vec<f64> = inner
        .split(',')
        .take(3)
        .map(|v| v.trim().parse::<f64>().unwrap() / 255.0)
        .collect();
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

/// The probe's four fields from a dumped DOM.
fn probe(dom: &str) -> [String; 4] {
    let key = "data-probe=\"";
    let i = dom.find(key).expect("the probe ran") + key.len();
    let v: Vec<String> = dom[i..]
        .split('"')
        .next()
        .unwrap()
        .split('|')
        .map(str::to_owned)
        .collect();
    [v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone()]
}

#[test]
fn dark_mode_darkens_the_page_and_light_mode_does_not() {
    let Some(exe) = browser() else { return };
    let name = "ecommerce";
    let target = target_dir();
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-browser-dark");
    std::fs::create_dir_all(&scratch).unwrap();
    let page = scratch.join(format!("{name}.html"));
    let status = Command::new(env!("CARGO_BIN_EXE_retrylint"))
        .args(["report", &format!("examples/{name}.yaml"), "-o"])
        .arg(&page)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let html_text = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html_text.matches("</body>").count(), 1);
    let probed = scratch.join(format!("{name}-probed.html"));
    std::fs::write(
        &probed,
        html_text.replace("</body>", &format!("{PROBE}</body>")),
    )
    .unwrap();
    let url = format!("file://{}", probed.canonicalize().unwrap().display());
    for (scheme, setting, dark) in [("dark", 0, true), ("light", 1, false)] {
        let profile = scratch.join(format!("profile-{scheme}"));
        let png = target.join(format!("review-{name}-{scheme}.png"));
        let dom = shoot(exe, &profile, &png, setting, &url, scheme);
        let [matches, background, text, chart_text] = probe(&dom);
        assert_eq!(
            matches,
            dark.to_string(),
            "chromium ignored preferredColorScheme={setting}"
        );
        let (bg, fg, chart) = (
            luminance(&background),
            luminance(&text),
            luminance(&chart_text),
        );
        if dark {
            assert!(bg < 0.15, "dark background {background}");
            assert!(
                fg > 0.7 && chart > 0.7,
                "light text on it: {text}, charts {chart_text}"
            );
        } else {
            assert!(bg > 0.9, "light background {background}");
            assert!(
                fg < 0.3 && chart < 0.3,
                "dark text on it: {text}, charts {chart_text}"
            );
        }
    }
}

#[test]
fn probe_colours_are_read() {
    assert_eq!(luminance("rgb(0, 0, 0)"), 0.0);
    assert!((luminance("rgb(255, 255, 255)") - 1.0).abs() < 1e-9);
    assert!(luminance("rgb(13, 17, 23)") < 0.1);
    assert_eq!(
        probe("<html data-probe=\"true|rgb(1, 2, 3)|rgb(4, 5, 6)|rgb(7, 8, 9)\"><body>"),
        ["true", "rgb(1, 2, 3)", "rgb(4, 5, 6)", "rgb(7, 8, 9)"].map(String::from)
    );
}

#[test]
fn console_errors_are_recognised() {
    // As chromium 148 logs them (seen with a page calling an undefined
    // function); the D-Bus complaint is chromium's own, not the page's.
    let log = "[1:1:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n[2:2:1201/071104.821927:INFO:CONSOLE:1] \"Uncaught ReferenceError: x is not defined\", source: file:///p.html (1)\n";
    assert_eq!(console_errors(log).len(), 1);
    assert_eq!(
        svg_sizes("<svg class=\"c\" width=\"600\" height=\"270\"><svg height=\"0\">"),
        [(600.0, 270.0), (0.0, 0.0)]
    );
    assert_eq!(
        graph_faults(
            "<html data-graph=\"10|label a &amp; b leaves the graph; service x overlaps label y\">"
        ),
        (
            10,
            vec![
                "label a & b leaves the graph".to_string(),
                "service x overlaps label y".to_string()
            ]
        )
    );
    assert_eq!(graph_faults("<html data-graph=\"7|\">"), (7, vec![]));
}
