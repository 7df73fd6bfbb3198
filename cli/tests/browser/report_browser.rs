//! The run report as a person sees it: `martian-zero report` on a run
//! directory with the awkward cases a report must survive (a gauntlet not connected to
//! the generations, perfect scores, a gate that always promotes), then the
//! page in headless Chromium at a desktop and a phone width. A script added
//! to a copy of the page measures the layout and writes its findings into the
//! DOM, which `chromium --headless --dump-dom` prints.
//!
//! Chromium: Debian's `chromium` (installed by `scripts/setup`); another
//! binary can be named in `MARTIAN_ZERO_CHROMIUM`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_martian-zero"))
}

fn chromium() -> String {
    std::env::var("MARTIAN_ZERO_CHROMIUM").unwrap_or_else(|_| "chromium".to_string())
}

fn w(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn mr(a: &str, b: &str, wins: u32, draws: u32, losses: u32) -> serde_json::Value {
    serde_json::json!({"a": a, "b": b, "wins": wins, "draws": draws, "losses": losses,
        "pentanomial": [0, 0, 0, 0, 0], "games": []})
}

/// A run directory of 3 generations with every file the report reads.
fn fixture(dir: &Path) {
    w(&dir.join("config.toml"), "game = \"martian-chess\"\nseed = 1\n[evaluate]\npairs = 6\ngate_score = 0.0\n");
    let mut train = String::new();
    for step in (10..=300).step_by(10) {
        let g = 1 + (step - 1) / 100;
        let x = step as f64 / 300.0;
        train.push_str(&format!(
            "{{\"step\":{step},\"generation\":{g},\"lr\":0.002,\"policy_loss\":{},\"value_loss\":{},\"total_loss\":{},\
             \"policy_accuracy\":{},\"value_mse\":0.3,\"samples_per_s\":4000.0,\"window\":{}}}\n",
            2.9 - x,
            0.9 - 0.5 * x,
            3.8 - 1.5 * x,
            0.2 + 0.4 * x,
            800 * g
        ));
    }
    w(&dir.join("train.jsonl"), &train);
    for g in 0..=3u32 {
        // The sidecar as the checkpoint writer's own type writes it.
        let game = martian_rules::GameKind::MartianChess;
        let meta = martian_model::CheckpointMeta {
            format_version: 2,
            game,
            rules: serde_json::json!({}),
            model: martian_model::ModelConfig::default(),
            input_shape: game.input_shape(),
            num_actions: game.num_actions(),
            step: 100 * g as u64,
            created_unix_s: 1_800_000_000 + 90 * g as u64,
            parent: None,
            tensors: None,
            weights_crc64: None,
        };
        w(&dir.join(format!("models/gen{g:04}.json")), &serde_json::to_string(&meta).unwrap());
    }
    let mut gens = String::new();
    for g in 1..=3u32 {
        let mut lines = String::new();
        for i in 0..12u32 {
            // Game ids carry their generation (`spool::game_id`).
            let id = (u64::from(g) << 40) | u64::from(i);
            let (winner, reason) = match i % 4 {
                0 => ("\"South\"", "Clock"),
                1 => ("\"North\"", "EmptyZone"),
                2 => ("null", "Clock"),
                _ => ("\"South\"", "EmptyZone"),
            };
            lines.push_str(&format!(
                "{{\"format_version\":2,\"game\":\"martian-chess\",\"game_id\":{id},\"start\":\"QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0\",\
                 \"moves\":[],\"winner\":{winner},\"reason\":\"{reason}\",\"plies\":{},\"samples\":3,\
                 \"model\":\"gen{:04}.safetensors\"}}\n",
                10 + 3 * i + 5 * g,
                g - 1
            ));
        }
        w(&dir.join(format!("games/gen{g:04}-w0-000000.jsonl")), &lines);
        let cal: Vec<String> = (0..5)
            .map(|k| {
                let p = -0.8 + 0.4 * k as f64;
                format!("{{\"predicted\":{p},\"outcome\":{},\"count\":20}}", p * 0.7)
            })
            .collect();
        gens.push_str(&format!(
            "{{\"generation\":{g},\"selfplay\":{{\"games\":12,\"positions\":{},\"nn_evals\":{},\"seconds\":1.5,\
             \"target_entropy\":1.6,\"kl_target_net\":0.8}},\"heldout\":{{\"network\":\"gen{:04}.safetensors\",\
             \"samples\":512,\"policy_loss\":{},\"value_loss\":0.9,\"policy_entropy\":2.5,\"kl_target_net\":0.9,\
             \"value_mse\":0.4,\"calibration\":[{}]}},\"finished_unix_s\":{}}}\n",
            900 + 50 * g,
            9000 + 500 * g,
            g - 1,
            3.0 - 0.2 * g as f64,
            cal.join(","),
            1_800_000_000 + 90 * g
        ));
    }
    w(&dir.join("generations.jsonl"), &gens);
    let net = |g: u32, v: u32| format!("mcts:model=gen{g:04}.safetensors,visits={v}");
    for (g, (wins, draws, losses)) in [(1u32, (5, 3, 4)), (2, (7, 3, 2)), (3, (2, 0, 10))] {
        let rec = serde_json::json!({"generation": g, "candidate": format!("gen{g:04}.safetensors"),
            "best": format!("gen{:04}.safetensors", g - 1), "promoted": true,
            "result": mr(&net(g, 32), &net(g - 1, 32), wins, draws, losses)});
        w(&dir.join(format!("eval/gen{g:04}.json")), &rec.to_string());
    }
    // A gauntlet at another visit count: not connected to the generations.
    let gauntlet = serde_json::json!({"player": net(3, 8), "matches": [
        mr(&net(3, 8), "alphabeta:depth=4", 3, 2, 1), mr(&net(3, 8), "greedy", 1, 2, 3)], "ratings": null});
    w(&dir.join("eval/gauntlet-x.json"), &gauntlet.to_string());
    // Two kinds of player of generation 2 (another visit count), connected: two series at x = 2.
    w(&dir.join("eval/match-b.json"), &mr(&net(2, 64), &net(2, 32), 3, 2, 1).to_string());
    let fin = serde_json::json!({"trained": "gen0003.safetensors", "best": "gen0003.safetensors",
        "vs_untrained": mr(&net(3, 32), &net(0, 32), 19, 1, 0), "vs_random": mr(&net(3, 32), "random", 20, 0, 0)});
    w(&dir.join("final-eval.json"), &fin.to_string());
    let ladder = serde_json::json!({"generation": 3, "network": "gen0003.safetensors", "alphabeta_version": 1,
        "anchor": "alphabeta:depth=1", "opponents": [["alphabeta:depth=1", 0.0], ["alphabeta:depth=2", 109.0]],
        "matches": [mr(&net(3, 32), "alphabeta:depth=1", 4, 6, 10), mr(&net(3, 32), "alphabeta:depth=2", 2, 4, 14)],
        "rating": {"elo": -180.0, "low": -300.0, "high": -60.0, "games": 40, "score": 0.25, "perfect": false}});
    w(&dir.join("eval/ladder-gen0003.json"), &ladder.to_string());
}

/// Measures the page; the findings go into `<pre id="probe">` as JSON.
const PROBE: &str = r#"<script>
(function () {
  const out = {};
  const vw = document.documentElement.clientWidth;
  out.title = document.title;
  out.viewport = vw;
  out.page_fits = document.documentElement.scrollWidth <= vw + 1;
  out.charts = [];
  for (const c of document.querySelectorAll('.chart')) {
    const svg = c.querySelector('svg');
    const r = svg.getBoundingClientRect();
    const legend = svg.querySelector('g.legend');
    const data = svg.querySelectorAll('g.data *');
    let overlaps = 0;
    if (legend) {
      const l = legend.getBoundingClientRect();
      for (const e of data) {
        const d = e.getBoundingClientRect();
        if (d.width === 0 && d.height === 0) continue;
        if (d.left < l.right && l.left < d.right && d.top < l.bottom && l.top < d.bottom) overlaps++;
      }
    }
    const ticks = Array.from(svg.querySelectorAll('text')).map(t => t.textContent.trim());
    out.charts.push({id: c.id, width: r.width, fits: r.right <= vw + 1 && r.left >= -1,
      has_data: data.length > 0, has_legend: !!legend, overlaps: overlaps,
      legend: legend ? Array.from(legend.querySelectorAll('text')).map(t => t.textContent.trim()) : [],
      bad_ticks: ticks.filter(t => t === '-0' || /^-?\d+\.0+$/.test(t)),
      y_ticks: Array.from(svg.querySelectorAll('text[text-anchor="end"]')).map(t => t.textContent.trim())
        .filter(t => /^-?[\d.]+k?$/.test(t)).sort((a, b) => parseFloat(a) - parseFloat(b))});
  }
  out.numbers_not_right = [];
  for (const td of document.querySelectorAll('td')) {
    const t = td.textContent.trim();
    if (/^[<>]?\s*[-+]?\d/.test(t) && getComputedStyle(td).textAlign !== 'right') out.numbers_not_right.push(t);
  }
  out.text = document.body.innerText;
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

/// The probe's findings on `page` in a window `width` pixels wide.
fn probe(page: &Path, width: u32) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let probe_page = page.with_file_name(format!("probe-{width}.html"));
    std::fs::write(&probe_page, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let profile = page.with_file_name(format!("chromium-profile-{width}"));
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--window-size={width},900"),
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", probe_page.display()))
        .output()
        .unwrap_or_else(|e| panic!("{} did not start ({e}); scripts/setup installs Debian's chromium", chromium()));
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"probe\">")
        .unwrap_or_else(|| panic!("no probe output; chromium stderr:\n{}", String::from_utf8_lossy(&out.stderr)))
        + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe JSON: {e}\n{json}"))
}

fn run_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mc-browser");
    fixture(&dir);
    (tmp, dir)
}

#[test]
fn report_in_headless_chromium() {
    let (_tmp, dir) = run_dir();
    let out = bin().args(["report", "--run-dir"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The warnings of the page are also printed.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("have no games linking them to the anchor"), "{stderr}");
    let page = dir.join("report.html");
    for width in [1280u32, 420] {
        let p = probe(&page, width);
        let text = p["text"].as_str().unwrap();
        // The title names the run.
        assert!(p["title"].as_str().unwrap().contains("mc-browser"), "{}", p["title"]);
        // No chart and no table makes the page wider than the window; charts scale with it.
        assert_eq!(p["page_fits"], true, "page wider than {width}px");
        // The layout viewport (Chromium keeps a minimum window width).
        let vw = p["viewport"].as_f64().unwrap();
        assert!(vw <= width.max(500) as f64, "viewport {vw} for a {width}px window");
        let charts = p["charts"].as_array().unwrap();
        let ids: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
        for id in [
            "ladder",
            "ladder-time",
            "ladder-games",
            "ladder-steps",
            "elo",
            "losses",
            "accuracy",
            "lr",
            "value-mse",
            "window",
            "selfplay-speed",
            "nn-speed",
            "train-speed",
            "heldout",
            "entropy",
            "calibration",
            "first-player",
            "results",
            "length",
            "length-histogram",
        ] {
            assert!(ids.contains(&id), "chart {id} missing: {ids:?}");
        }
        for c in charts {
            let id = c["id"].as_str().unwrap();
            assert_eq!(c["fits"], true, "{id} wider than the {width}px window: {c}");
            assert!(c["width"].as_f64().unwrap() <= vw, "{id}: {c}");
            assert_eq!(c["has_data"], true, "{id} has no data: {c}");
            assert_eq!(c["has_legend"], true, "{id} has no legend: {c}");
            assert_eq!(c["overlaps"], 0, "{id}: the legend covers data points: {c}");
            assert!(c["bad_ticks"].as_array().unwrap().is_empty(), "{id}: ticks like 1.0 or -0: {c}");
        }
        // Players of one generation at two visit counts: two labelled series.
        let elo = charts.iter().find(|c| c["id"] == "elo").unwrap();
        let legend: Vec<&str> = elo["legend"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        for l in ["fit: gen*,visits=32", "fit: gen*,visits=64", "gate chain (gen g vs best)"] {
            assert!(legend.contains(&l), "{l} not in the Elo legend {legend:?}");
        }
        // The accuracy axis starts at 0.
        let acc = charts.iter().find(|c| c["id"] == "accuracy").unwrap();
        assert_eq!(acc["y_ticks"][0], "0", "{acc}");
        // Numbers are right-aligned.
        assert!(p["numbers_not_right"].as_array().unwrap().is_empty(), "{}", p["numbers_not_right"]);
        // Item 1: every player is in the ratings, the unconnected gauntlet group is flagged.
        for player in ["gen0000.safetensors,visits=32", "gen0003.safetensors,visits=8", "random", "greedy"] {
            assert!(text.contains(player), "{player} missing");
        }
        assert!(text.contains("have no games linking them to the anchor"), "no warning");
        assert!(text.contains("not connected to the anchor"), "no note in the table");
        // Item 2: no zero-width interval, perfect scores as bounds.
        let degenerate = text.split('[').skip(1).filter_map(|s| s.split(']').next()).find(|iv| {
            let ends: Vec<&str> = iv.split(", ").collect();
            ends.len() == 2 && ends[0] == ends[1]
        });
        assert_eq!(degenerate, None, "degenerate interval in the page");
        assert!(text.contains("lost every game"), "no perfect-score note");
        assert!(text.contains("< -"), "no one-sided bound");
        // Item 3: the reason of each promotion.
        assert!(text.contains("always promote"), "no promotion reason");
    }
}

#[test]
fn report_with_an_unknown_anchor_fails() {
    let (_tmp, dir) = run_dir();
    let out = bin().args(["report", "--anchor", "nosuch", "--run-dir"]).arg(&dir).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--anchor nosuch: no such player") && err.contains("random"), "{err}");
}
