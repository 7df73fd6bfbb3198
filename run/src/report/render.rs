//! The report as Markdown and as one self-contained HTML page, and its tables.

use std::fmt::Write as _;

use super::*;

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A table built once, written as Markdown and as HTML (numbers right-aligned).
pub(super) struct Table {
    pub(super) head: Vec<(String, bool)>,
    pub(super) rows: Vec<Vec<String>>,
    /// Columns holding code (player names).
    pub(super) code: Vec<bool>,
}

impl Table {
    /// `cols`: (header, numeric).
    pub(super) fn new(cols: &[(&str, bool)]) -> Table {
        Table {
            head: cols.iter().map(|c| (c.0.to_string(), c.1)).collect(),
            rows: Vec::new(),
            code: vec![false; cols.len()],
        }
    }

    pub(super) fn code(mut self, col: usize) -> Table {
        self.code[col] = true;
        self
    }

    pub(super) fn md(&self) -> String {
        let mut s = String::from("|");
        for (h, _) in &self.head {
            let _ = write!(s, " {h} |");
        }
        s.push_str("\n|");
        for (_, num) in &self.head {
            s.push_str(if *num { "---:|" } else { "---|" });
        }
        s.push('\n');
        for r in &self.rows {
            s.push('|');
            for (i, c) in r.iter().enumerate() {
                if self.code[i] && !c.is_empty() {
                    let _ = write!(s, " `{c}` |");
                } else {
                    let _ = write!(s, " {} |", c.replace('|', "\\|"));
                }
            }
            s.push('\n');
        }
        s
    }

    pub(super) fn html(&self) -> String {
        let mut s = String::from("<div class=\"scroll\"><table><tr>");
        for (h, num) in &self.head {
            let _ = write!(s, "<th{}>{}</th>", if *num { " class=\"num\"" } else { "" }, esc(h));
        }
        s.push_str("</tr>\n");
        for r in &self.rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let cls = if self.head[i].1 { " class=\"num\"" } else { "" };
                if self.code[i] {
                    let _ = write!(s, "<td{cls}><code>{}</code></td>", esc(c));
                } else {
                    let _ = write!(s, "<td{cls}>{}</td>", esc(c));
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table></div>\n");
        s
    }
}

// ---------------------------------------------------------------- the report

pub(super) fn markdown(v: &View) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# MartianZero run report: {}\n", v.name);
    let _ = writeln!(md, "{} Open `{}` for the charts inline.\n", v.summary, crate::layout::REPORT_HTML);
    for w in &v.warnings {
        let _ = writeln!(md, "> **Warning:** {w}\n");
    }
    for n in &v.notes {
        let _ = writeln!(md, "> **Note:** {n}\n");
    }
    for (title, text, tables) in &v.sections {
        let _ = writeln!(md, "## {title}\n\n{text}\n");
        for t in tables {
            let _ = writeln!(md, "{}", t.md());
        }
    }
    let _ = writeln!(md, "## Charts\n");
    for (stem, _, title, _) in &v.charts {
        let _ = writeln!(md, "### {title}\n\n![{title}](report/{stem}.svg)\n");
    }
    let _ = writeln!(md, "## Crosstable\n\nRow player's wins, draws and losses against the column player.\n");
    let _ = writeln!(md, "{}\n{}", v.crosstable_key.md(), v.crosstable.md());
    let _ = writeln!(md, "## Settings\n\n```toml\n{}\n```", v.config.trim_end());
    md
}

/// The page's style: numbers right-aligned, wide tables scroll inside the
/// page, charts scale to the page width.
pub(super) const CSS: &str = "body{font-family:sans-serif;margin:16px auto;max-width:1100px;padding:0 12px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #bbb;padding:3px 8px;font-size:13px}\
th{background:#eee;text-align:left}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.scroll{max-width:100%;overflow-x:auto}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}\
.chart svg{width:100%;height:auto;display:block}.chart{margin:8px 0;max-width:960px}\
.grid{display:block}\
.warning{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px;margin:6px 0}\
.note{background:#eef4fb;border:1px solid #9cc;padding:6px 10px;margin:6px 0}";

/// The chart SVG with its fixed size replaced by the page width (the viewBox keeps the aspect).
pub(super) fn responsive(svg: &str) -> String {
    svg.replacen(&format!("<svg width=\"{CHART_W}\" height=\"{CHART_H}\" "), "<svg ", 1)
}

pub(super) fn md_inline(s: &str) -> String {
    // `code` spans to <code>, the rest escaped.
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

pub(super) fn html(v: &View) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>MartianZero report: {}</title>\n<style>{CSS}</style></head><body>",
        esc(&v.name)
    );
    let _ = writeln!(h, "<h1>MartianZero run report: {}</h1><p>{}</p>", esc(&v.name), md_inline(&v.summary));
    for w in &v.warnings {
        let _ = writeln!(h, "<p class=\"warning\"><b>Warning:</b> {}</p>", md_inline(w));
    }
    for n in &v.notes {
        let _ = writeln!(h, "<p class=\"note\"><b>Note:</b> {}</p>", md_inline(n));
    }
    let mut chart_sections: Vec<&str> = Vec::new();
    for (_, sec, _, _) in &v.charts {
        if !chart_sections.contains(sec) {
            chart_sections.push(sec);
        }
    }
    let write_charts = |h: &mut String, sec: &str| {
        let _ = writeln!(h, "<h2>{}</h2><div class=\"grid\">", esc(sec));
        for (stem, s, title, svg) in &v.charts {
            if *s == sec {
                let _ = writeln!(
                    h,
                    "<div class=\"chart\" id=\"{stem}\" title=\"{}\">{}</div>",
                    esc(title),
                    responsive(svg)
                );
            }
        }
        let _ = writeln!(h, "</div>");
    };
    for (i, (title, text, tables)) in v.sections.iter().enumerate() {
        let _ = writeln!(h, "<h2>{}</h2><p>{}</p>", esc(title), md_inline(text));
        for t in tables {
            h.push_str(&t.html());
        }
        if i == 1 {
            // After the ladder and ratings tables: the strength charts.
            write_charts(&mut h, "Strength");
        }
    }
    for sec in chart_sections.iter().filter(|s| **s != "Strength") {
        write_charts(&mut h, sec);
    }
    let _ = writeln!(h, "<h2>Crosstable</h2><p>Row player's wins, draws and losses against the column player.</p>");
    h.push_str(&v.crosstable_key.html());
    h.push_str(&v.crosstable.html());
    let _ = writeln!(h, "<h2>Settings</h2><pre>{}</pre></body></html>", esc(&v.config));
    h
}
