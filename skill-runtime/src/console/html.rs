//! The pages' frame: escaping, the layout every page shares (its style and
//! the one small script, which refreshes the parts of a page marked live),
//! and the pieces pages are written from.

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `text` made safe between tags and inside quoted attributes.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` made safe in a URL's path segment or query value.
pub(super) fn url_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `%XX` and `+` decoded, as forms and query strings write them; `None`
/// for a value that is not UTF-8 once decoded.
pub(super) fn url_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b'%' => return None,
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The `name=value` pairs of a query string or a form body, decoded; pairs
/// that do not decode are left out.
pub(super) fn pairs(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((url_decode(k)?, url_decode(v)?))
        })
        .collect()
}

/// A time as UTC, to the second: `2026-12-07 08:15:02`.
pub(super) fn time(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A duration in microseconds, as people read it: `840 µs`, `12.5 ms`,
/// `3.2 s`.
pub(super) fn micros(us: u64) -> String {
    match us {
        0..1_000 => format!("{us} µs"),
        1_000..1_000_000 => format!("{:.1} ms", us as f64 / 1e3),
        _ => format!("{:.1} s", us as f64 / 1e6),
    }
}

/// How long until `t` from now, as people read it: `in 4 min`, `2 s ago`.
pub(super) fn from_now(t: SystemTime) -> String {
    let (d, ahead) = match t.duration_since(SystemTime::now()) {
        Ok(d) => (d, true),
        Err(e) => (e.duration(), false),
    };
    let span = span(d);
    if ahead {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

fn span(d: Duration) -> String {
    match d.as_secs() {
        0..120 => format!("{} s", d.as_secs()),
        120..7200 => format!("{} min", d.as_secs() / 60),
        7200..172_800 => format!("{} h", d.as_secs() / 3600),
        s => format!("{} days", s / 86_400),
    }
}

/// What every page is drawn in: its title, who is looking, the navigation.
pub(super) struct Frame<'a> {
    /// Where the console is mounted (`""`, or `/console`).
    pub base: &'a str,
    /// The page's title.
    pub title: &'a str,
    /// Who is looking, for the header; `None` on the login page.
    pub viewer: Option<&'a str>,
    /// Whether the viewer signed in with a credential (and may sign out).
    pub signed_in: bool,
    /// The token forms post with.
    pub csrf: &'a str,
}

/// A whole page: `body` in the frame.
pub(super) fn page(frame: &Frame<'_>, body: &str) -> String {
    let base = frame.base;
    let mut out = String::with_capacity(body.len() + 4096);
    let _ = write!(
        out,
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width, initial-scale=1\">\
         <title>{} · skills console</title><style>{STYLE}</style></head><body>\
         <header><a class=brand href=\"{base}/\">skills console</a><nav>\
         <a href=\"{base}/queue\">Queue</a><a href=\"{base}/runs\">Runs</a>\
         <a href=\"{base}/pipelines\">Durable runs</a>\
         <a href=\"{base}/stats\">Latency</a><a href=\"{base}/skills\">Skills</a></nav>",
        esc(frame.title)
    );
    if let Some(who) = frame.viewer {
        let _ = write!(out, "<span class=who>{}</span>", esc(who));
        if frame.signed_in {
            let _ = write!(
                out,
                "<form method=post action=\"{base}/logout\" class=inline>{}\
                 <button class=link>Sign out</button></form>",
                csrf_field(frame.csrf)
            );
        }
    }
    let _ = write!(
        out,
        "</header><main><h1>{}</h1>{body}</main><script>{SCRIPT}</script></body></html>",
        esc(frame.title)
    );
    out
}

/// The hidden field every form posts its token in.
pub(super) fn csrf_field(token: &str) -> String {
    format!("<input type=hidden name=csrf value=\"{}\">", esc(token))
}

/// A table of `head` and `rows` (cells already HTML); `empty` when there
/// are no rows.
pub(super) fn table(head: &[&str], rows: &[Vec<String>], empty: &str) -> String {
    if rows.is_empty() {
        return format!("<p class=muted>{}</p>", esc(empty));
    }
    let mut out = String::from("<table><thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// A progress bar for `done` of `total` (none known: the count alone).
pub(super) fn bar(done: u64, total: Option<u64>) -> String {
    match total {
        Some(t) if t > 0 => {
            let pct = (done.min(t) * 100 / t).min(100);
            format!(
                "<span class=bar role=progressbar aria-valuenow={done} aria-valuemax={t}>\
                 <span style=\"width:{pct}%\"></span></span> {done} of {t}"
            )
        }
        _ => format!("{done}"),
    }
}

/// A status as a badge.
pub(super) fn badge(status: &str) -> String {
    format!("<span class=\"badge {0}\">{0}</span>", esc(status))
}

/// JSON, indented, as a block of text.
pub(super) fn json_block(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    format!("<pre>{}</pre>", esc(&text))
}

const STYLE: &str = "\
:root{--fg:#1d2330;--muted:#667085;--line:#e4e7ec;--bg:#f8f9fb;--accent:#2454d6;--ok:#127a3a;--bad:#b42318;--warn:#a15c07}\
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}\
header{display:flex;gap:1.2em;align-items:center;padding:.6em 1.5em;background:#fff;border-bottom:1px solid var(--line)}\
header nav{display:flex;gap:1em;flex:1}a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}\
.brand{font-weight:600;color:var(--fg)}.who{color:var(--muted)}main{padding:1em 1.5em;max-width:1200px}\
h1{font-size:1.4em;margin:.2em 0 .8em}h2{font-size:1.1em;margin:1.6em 0 .5em}\
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line)}\
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid var(--line);vertical-align:top}\
th{font-weight:600;background:#f2f4f7}pre{background:#fff;border:1px solid var(--line);padding:.8em;overflow:auto;font-size:13px}\
.muted{color:var(--muted)}.cards{display:flex;gap:1em;flex-wrap:wrap}\
.card{background:#fff;border:1px solid var(--line);padding:.6em 1em;min-width:9em}.card b{display:block;font-size:1.5em}\
.badge{padding:.05em .5em;border-radius:1em;font-size:.85em;background:#eef1f5}\
.succeeded,.kpi-ok{color:var(--ok)}.kpi-critical{color:var(--bad)}.kpi-warning{color:var(--warn)}.failed,.expired{color:var(--bad)}.cancelled,.skipped{color:var(--warn)}\
.bar{display:inline-block;width:8em;height:.7em;background:#eef1f5;vertical-align:middle}.bar span{display:block;height:100%;background:var(--accent)}\
form.inline{display:inline}button{font:inherit;padding:.2em .8em;cursor:pointer}button.approve{color:#fff;background:var(--ok);border:0}\
button.deny{color:#fff;background:var(--bad);border:0}button.link{background:none;border:0;color:var(--accent);padding:0}\
.notice{background:#ecfdf3;border:1px solid #abefc6;padding:.5em 1em}.error{background:#fef3f2;border:1px solid #fecdca;padding:.5em 1em}\
input[type=text],input[type=password],select{font:inherit;padding:.2em .4em}.filters{display:flex;gap:.6em;margin-bottom:1em;flex-wrap:wrap}\
svg text{font:12px system-ui,sans-serif;fill:var(--fg)}";

/// The one script: every element marked `data-live` is fetched again every
/// second and replaced by the same element of the fresh page (progress moves
/// without reloading, and a form being filled in is not touched).
const SCRIPT: &str = "\
(function(){var live=document.querySelectorAll('[data-live]');if(!live.length)return;\
setInterval(function(){fetch(location.href,{credentials:'same-origin'}).then(function(r){return r.ok?r.text():null})\
.then(function(t){if(!t)return;var d=new DOMParser().parseFromString(t,'text/html');\
live.forEach(function(el){var n=d.getElementById(el.id);if(n)el.innerHTML=n.innerHTML;});}).catch(function(){});},1000);})();";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_urls_round_trip() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let odd = "a b/é?&=%";
        assert_eq!(url_decode(&url_part(odd)).as_deref(), Some(odd));
        assert_eq!(url_decode("a+b%2Fc").as_deref(), Some("a b/c"));
        assert_eq!(url_decode("%zz"), None);
        assert_eq!(url_decode("%4"), None);
        assert_eq!(
            pairs("skill=echo&status=&x"),
            [
                ("skill".into(), "echo".into()),
                ("status".into(), String::new()),
                ("x".into(), String::new())
            ]
        );
    }

    #[test]
    fn times_read_as_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_630_102);
        assert_eq!(time(t), "2026-12-07 07:55:02");
        assert_eq!(time(UNIX_EPOCH), "1970-01-01 00:00:00");
        assert_eq!(micros(840), "840 µs");
        assert_eq!(micros(12_500), "12.5 ms");
    }
}
