//! `lucent demo`'s report.html: one self-contained page (the figures embedded as base64 PNG, the
//! style inline, no script, nothing fetched), so it can be mailed or archived as one file and
//! opened anywhere. Each part of the demo is a section: what was done, its numbers, its figures;
//! the page ends with the commands that make it again.

use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use lucent::Error;

use crate::demo_figure::Figure;

/// One part of the demo on the page.
pub struct Section {
    pub title: String,
    /// What was done, in plain text.
    pub text: String,
    /// (measure, value with its unit), shown as a table.
    pub numbers: Vec<(String, String)>,
    pub figures: Vec<Figure>,
}

/// Writes `dir/report.html`, atomically.
pub fn write(dir: &Path, intro: &str, sections: &[Section], commands: &[String]) -> Result<(), Error> {
    let html = page(intro, sections, commands);
    lucent::host::write_atomic(&dir.join("report.html"), |w| std::io::Write::write_all(w, html.as_bytes()).map_err(Error::Io))
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:24px;color:#111;background:#fff;max-width:1900px}\
h1{font-size:26px}h2{font-size:21px;margin-top:36px;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 10px;text-align:left}\
td.v{text-align:right;font-variant-numeric:tabular-nums}\
figure{margin:16px 0;overflow-x:auto}figcaption{max-width:1100px;font-size:15px;margin-top:4px}\
pre{background:#f4f4f4;padding:10px;overflow-x:auto}";

fn page(intro: &str, sections: &[Section], commands: &[String]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>lucent demo</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    let _ = writeln!(h, "<h1>lucent demo</h1>\n<p>{}</p>", escape(intro));
    for s in sections {
        let _ = writeln!(h, "<section>\n<h2>{}</h2>\n<p>{}</p>", escape(&s.title), escape(&s.text));
        if !s.numbers.is_empty() {
            h.push_str("<table>\n");
            for (k, v) in &s.numbers {
                let _ = writeln!(h, "<tr><th>{}</th><td class=\"v\">{}</td></tr>", escape(k), escape(v));
            }
            h.push_str("</table>\n");
        }
        for f in &s.figures {
            let data = base64::engine::general_purpose::STANDARD.encode(&f.png);
            let _ = writeln!(
                h,
                "<figure id=\"{id}\">\n<img src=\"data:image/png;base64,{data}\" alt=\"{title}\">\n<figcaption><b>{title}.</b> {caption} (also {file}.)</figcaption>\n</figure>",
                id = escape(f.file.trim_end_matches(".png")),
                title = escape(&f.title),
                caption = escape(&f.caption),
                file = escape(&f.file),
            );
        }
        h.push_str("</section>\n");
    }
    h.push_str("<section>\n<h2>Reproduce</h2>\n<pre>");
    for c in commands {
        let _ = writeln!(h, "{}", escape(c));
    }
    h.push_str("</pre>\n</section>\n</body>\n</html>\n");
    h
}

/// Text as HTML: the five characters HTML gives a meaning escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
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
