//! Drawing one chart: plotters' SVG backend, series, axes and legend.

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::fmt::Write as _;

/// The report charts: (file stem, section, title, SVG).
pub(super) type Chart = (&'static str, &'static str, &'static str, String);

pub(super) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Size of every chart (the HTML scales it to the page width).
pub(super) const CHART_W: u32 = 900;
pub(super) const CHART_H: u32 = 380;
/// Width of the legend column right of the plot (legends never cover data).
pub(super) const LEGEND_W: u32 = 230;

macro_rules! pe {
    ($e:expr) => {
        $e.map_err(|e| anyhow!("chart: {e}"))?
    };
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Mark {
    /// Line through the points, with a dot on each.
    Line,
    /// Points with vertical 95% bars (`err`).
    ErrorBars,
    /// Filled rectangles (`rects`).
    Bars,
    /// A horizontal line across the plot at `pts[0].1`.
    HLine,
    /// A dashed line (e.g. the diagonal of perfect calibration).
    Dashed,
}

/// One series of a chart.
pub(super) struct Series {
    pub(super) name: String,
    pub(super) mark: Mark,
    pub(super) color: RGBColor,
    pub(super) pts: Vec<(f64, f64)>,
    /// `(x, y, low, high)` for [`Mark::ErrorBars`].
    pub(super) err: Vec<(f64, f64, f64, f64)>,
    /// `(x, bound, above)`: only a lower (`above`) or upper bound is known:
    /// a triangle at the bound and a bar to the edge of the plot.
    pub(super) open: Vec<(f64, f64, bool)>,
    pub(super) rects: Vec<(f64, f64, f64, f64)>,
}

impl Series {
    pub(super) fn new(name: impl Into<String>, mark: Mark, i: usize) -> Series {
        Series {
            name: name.into(),
            mark,
            color: PALETTE[i % PALETTE.len()],
            pts: Vec::new(),
            err: Vec::new(),
            open: Vec::new(),
            rects: Vec::new(),
        }
    }

    pub(super) fn with(mut self, pts: Vec<(f64, f64)>) -> Series {
        self.pts = pts.into_iter().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        self
    }

    pub(super) fn is_empty(&self) -> bool {
        self.pts.is_empty() && self.err.is_empty() && self.open.is_empty() && self.rects.is_empty()
    }
}

/// What a chart shows besides its series.
pub(super) struct Spec<'a> {
    pub(super) title: &'a str,
    pub(super) x_desc: &'a str,
    pub(super) y_desc: &'a str,
    /// The x axis counts (generations): integer labels only.
    pub(super) x_int: bool,
    /// Fixed y range ends.
    pub(super) y_min: Option<f64>,
    pub(super) y_max: Option<f64>,
    pub(super) x_min: Option<f64>,
    pub(super) x_max: Option<f64>,
    /// Dashed vertical lines (generation boundaries on a step axis).
    pub(super) vlines: Vec<f64>,
    pub(super) empty: &'a str,
}

impl<'a> Spec<'a> {
    pub(super) fn new(title: &'a str, x_desc: &'a str, y_desc: &'a str) -> Spec<'a> {
        Spec {
            title,
            x_desc,
            y_desc,
            x_int: false,
            y_min: None,
            y_max: None,
            x_min: None,
            x_max: None,
            vlines: Vec::new(),
            empty: "no data yet",
        }
    }
}

/// A tick label: integers without decimals, no `-0`, at most 3 decimals.
pub(super) fn tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let r = v.round();
    if (v - r).abs() < 1e-9 * v.abs().max(1.0) {
        let i = r as i64;
        return if i.abs() >= 100_000 { format!("{:.0}k", r / 1000.0) } else { i.to_string() };
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A tick label of a counting axis: integers only (other ticks unlabelled).
pub(super) fn int_tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        tick(v)
    } else {
        String::new()
    }
}

pub(super) fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - pad, hi + pad);
    }
    let pad = (hi - lo) * 0.06;
    (lo - pad, hi + pad)
}

/// Replaces the marker texts `@@OPEN:name@@` and `@@CLOSE@@` by `<g class="name">` and `</g>`.
pub(super) fn wrap_groups(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(m) = rest.find("@@") {
        let Some(t0) = rest[..m].rfind("<text") else { break };
        let Some(t1) = rest[m..].find("</text>").map(|i| m + i + "</text>".len()) else { break };
        let inner = rest[m + 2..].split("@@").next().unwrap_or("");
        out.push_str(&rest[..t0]);
        match inner.strip_prefix("OPEN:") {
            Some(name) => {
                let _ = write!(out, "<g class=\"{name}\">");
            }
            None => out.push_str("</g>"),
        }
        rest = &rest[t1..];
    }
    out.push_str(rest);
    out
}

/// Draws a chart: plot on the left, legend in its own column on the right.
pub(super) fn chart(spec: &Spec, series: &[Series]) -> Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (CHART_W, CHART_H)).into_drawing_area();
        pe!(root.fill(&WHITE));
        let (plot, legend) = root.split_horizontally(CHART_W - LEGEND_W);
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        let mut see = |x: Option<f64>, y: Option<f64>| {
            if let Some(x) = x.filter(|x| x.is_finite()) {
                x0 = x0.min(x);
                x1 = x1.max(x);
            }
            if let Some(y) = y.filter(|y| y.is_finite()) {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        };
        for s in series {
            for &(x, y) in &s.pts {
                see((s.mark != Mark::HLine).then_some(x), Some(y));
            }
            for &(x, y, lo, hi) in &s.err {
                see(Some(x), Some(y));
                see(None, Some(lo));
                see(None, Some(hi));
            }
            for &(x, b, _) in &s.open {
                see(Some(x), Some(b));
            }
            for &(a, b, c, d) in &s.rects {
                see(Some(a), Some(b));
                see(Some(c), Some(d));
            }
        }
        let any = series.iter().any(|s| !s.is_empty() && s.mark != Mark::HLine);
        let (mut xa, mut xb) = if spec.x_int && x0.is_finite() { (x0 - 0.5, x1 + 0.5) } else { padded(x0, x1) };
        let (mut ya, mut yb) = padded(y0, y1);
        if let Some(v) = spec.x_min {
            xa = v;
        }
        if let Some(v) = spec.x_max {
            xb = v;
        }
        if let Some(v) = spec.y_min {
            ya = v;
        }
        if let Some(v) = spec.y_max {
            yb = v.max(ya + 1e-9);
        }
        if !any {
            (xa, xb, ya, yb) = (0.0, 1.0, 0.0, 1.0);
        }
        let mut ch = pe!(ChartBuilder::on(&plot)
            .caption(spec.title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(xa..xb, ya..yb));
        let span = xb - xa;
        let x_labels = if spec.x_int { (span.round() as usize + 1).clamp(2, 12) } else { 10 };
        let fx = |x: &f64| if spec.x_int { int_tick(*x) } else { tick(*x) };
        let fy = |y: &f64| tick(*y);
        pe!(ch
            .configure_mesh()
            .x_labels(x_labels)
            .y_labels(8)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .x_desc(spec.x_desc)
            .y_desc(spec.y_desc)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .draw());
        if !any {
            pe!(plot.draw(&Text::new(spec.empty.to_string(), (280, 180), ("sans-serif", 18))));
            pe!(root.present());
            drop(ch);
        } else {
            let grey = RGBColor(150, 150, 150);
            for &v in &spec.vlines {
                pe!(ch.draw_series(DashedLineSeries::new([(v, ya), (v, yb)], 4, 4, grey.stroke_width(1))));
            }
            pe!(plot.draw(&Text::new("@@OPEN:data@@", (0, 0), ("sans-serif", 1))));
            for s in series {
                let c = s.color;
                match s.mark {
                    Mark::Line => {
                        pe!(ch.draw_series(LineSeries::new(s.pts.iter().copied(), c.stroke_width(2))));
                        pe!(ch.draw_series(s.pts.iter().map(|&p| Circle::new(p, 3, c.filled()))));
                    }
                    Mark::ErrorBars => {
                        pe!(ch.draw_series(s.err.iter().map(|&(x, y, lo, hi)| ErrorBar::new_vertical(
                            x,
                            lo,
                            y,
                            hi,
                            c.stroke_width(2),
                            8
                        ))));
                        pe!(ch.draw_series(s.err.iter().map(|&(x, y, _, _)| Circle::new((x, y), 4, c.filled()))));
                    }
                    Mark::Bars => {
                        pe!(ch.draw_series(
                            s.rects.iter().map(|&(a, b, cc, d)| Rectangle::new([(a, b), (cc, d)], c.filled()))
                        ));
                    }
                    Mark::HLine => {
                        if let Some(&(_, y)) = s.pts.first() {
                            pe!(ch.draw_series(LineSeries::new([(xa, y), (xb, y)], c.stroke_width(1))));
                        }
                    }
                    Mark::Dashed => {
                        pe!(ch.draw_series(DashedLineSeries::new(s.pts.iter().copied(), 6, 4, c.stroke_width(1))));
                    }
                }
                for &(x, b, above) in &s.open {
                    let end = if above { yb } else { ya };
                    pe!(ch.draw_series(LineSeries::new([(x, b), (x, end)], c.stroke_width(2))));
                    pe!(ch.draw_series([TriangleMarker::new((x, b), 6, c.filled())]));
                }
            }
            pe!(plot.draw(&Text::new("@@CLOSE@@", (0, 0), ("sans-serif", 1))));
            // Legend column.
            pe!(legend.draw(&Text::new("@@OPEN:legend@@", (0, 0), ("sans-serif", 1))));
            let mut y = 44;
            let entries = series.iter().filter(|s| !s.is_empty() && !s.name.is_empty());
            for s in entries {
                let c = s.color;
                let yc = y + 7;
                match s.mark {
                    Mark::Bars => pe!(legend.draw(&Rectangle::new([(6, yc - 6), (20, yc + 6)], c.filled()))),
                    Mark::ErrorBars => pe!(legend.draw(&Circle::new((13, yc), 4, c.filled()))),
                    _ => pe!(legend.draw(&PathElement::new(vec![(4, yc), (24, yc)], c.stroke_width(2)))),
                }
                let mut name: String = s.name.chars().take(28).collect();
                if s.name.chars().count() > 28 {
                    name.push('…');
                }
                pe!(legend.draw(&Text::new(name, (30, y), ("sans-serif", 13))));
                y += 20;
                if y > CHART_H as i32 - 30 {
                    break;
                }
            }
            if series.iter().any(|s| !s.open.is_empty()) {
                pe!(legend.draw(&TriangleMarker::new((13, y + 7), 6, BLACK.filled())));
                pe!(legend.draw(&Text::new("bound only (all won/lost)", (30, y), ("sans-serif", 13))));
                y += 20;
            }
            if !spec.vlines.is_empty() {
                let g = RGBColor(150, 150, 150);
                pe!(legend.draw(&PathElement::new(vec![(4, y + 7), (24, y + 7)], g.stroke_width(1))));
                pe!(legend.draw(&Text::new("generation boundary", (30, y), ("sans-serif", 13))));
            }
            pe!(legend.draw(&Text::new("@@CLOSE@@", (0, 0), ("sans-serif", 1))));
            pe!(root.present());
        }
    }
    Ok(wrap_groups(&buf))
}

// ---------------------------------------------------------------- tables
